/**
 * The TypeScript kit's conformance bot: a bot whose behaviour the transcript scripts
 * (clients/conformance/README.md), run through the kit's own `main`.
 */

import { Event } from "../gen/pusoy/referee/v1/common";
import { Snapshot, Welcome } from "../gen/pusoy/referee/v1/play_service";
import { Bot, Choice, fallback, main, PASS, Prompt, Rejection, Tracker } from "../lib";

/** A scripted check failed: say why and stop at once (the transcript then fails). */
const EXIT_CHECK_FAILED = 70;
function checkFailed(why: string): never {
  process.stderr.write(`typescript-conformance: check failed: ${why}\n`);
  process.exit(EXIT_CHECK_FAILED);
}

/** What the tracker holds that differs from the referee's state in the prompt. */
function trackerDiffers(t: Tracker, p: Prompt): string | undefined {
  const st = p.state;
  const pairs: [string, unknown, unknown][] = [
    ["handNumber", t.handNumber, st.handNumber],
    ["hand", t.hand, p.hand],
    ["cardCounts", t.cardCounts, st.cardCounts],
    ["playedCards", t.playedCards, st.playedCards],
    ["table", t.table, st.table?.cards ?? []],
    ["tableSeat", t.tableSeat ?? null, st.tableSeat ?? null],
    ["lockedOut", t.lockedOut, st.lockedOut],
    ["revolution", t.revolution, st.revolution],
    ["trick", t.trick, st.trick.map((x) => ({ seat: x.seat, cards: x.pass ? [] : (x.play?.cards ?? []) }))],
    ["totals", t.totals, st.totals],
    ["handsWon", t.handsWon, st.handsWon],
  ];
  for (const [name, mine, theirs] of pairs) {
    if (JSON.stringify(mine) !== JSON.stringify(theirs)) {
      return `turn ${p.turnId}: tracker ${name} ${JSON.stringify(mine)}, the referee's ${JSON.stringify(theirs)}`;
    }
  }
  return undefined;
}

interface Step {
  play?: string[];
  pass?: boolean;
  block_ms?: number;
  until_remaining_ms?: number;
  throw?: string;
}

interface Script {
  choose?: Record<string, Step>;
  on_rejected?: Record<string, Step>;
  throw_in?: string[];
  want_legal_plays?: boolean;
  tracker?: boolean;
  events_before?: Record<string, number>;
  events_total?: number;
}

/** Blocks the main thread (a busy bot that ignores its budget). */
function block(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

class ConformanceBot extends Bot {
  name = "typescript-conformance";
  readonly tracker: Tracker | undefined;
  events = 0;

  constructor(readonly script: Script) {
    super();
    this.wantLegalPlays = script.want_legal_plays ?? true;
    this.tracker = script.tracker ? new Tracker() : undefined;
  }

  private step(step: Step, prompt: Prompt): Choice {
    if (step.block_ms !== undefined) block(step.block_ms);
    if (step.until_remaining_ms !== undefined) {
      while (prompt.budget.remainingMs() > step.until_remaining_ms) block(5);
    }
    if (step.throw !== undefined) throw new Error(step.throw);
    if (step.pass) return PASS;
    return step.play ?? PASS;
  }

  private throws(hook: string): void {
    if (this.script.throw_in?.includes(hook)) throw new Error(`scripted failure in ${hook}`);
  }

  choose(prompt: Prompt): Choice {
    const want = this.script.events_before?.[String(prompt.turnId)];
    if (want !== undefined && want !== this.events) checkFailed(`turn ${prompt.turnId}: ${this.events} events before choose, not ${want}`);
    const differs = this.tracker && trackerDiffers(this.tracker, prompt);
    if (differs) checkFailed(differs);
    const step = this.script.choose?.[String(prompt.turnId)];
    if (step === undefined) return prompt.legalPlays[0]?.cards ?? PASS;
    return this.step(step, prompt);
  }

  onRejected(prompt: Prompt, rejection: Rejection): Choice {
    void rejection;
    this.throws("on_rejected");
    const step = this.script.on_rejected?.[String(prompt.turnId)];
    return step === undefined ? fallback(prompt) : this.step(step, prompt);
  }

  onWelcome(welcome: Welcome): void {
    this.tracker?.onWelcome(welcome);
    this.throws("on_welcome");
  }

  onSnapshot(snapshot: Snapshot): void {
    this.tracker?.onSnapshot(snapshot);
    this.throws("on_snapshot");
  }

  onEvent(event: Event): void {
    this.events += 1;
    this.tracker?.onEvent(event);
    this.throws("on_event");
  }
}

const script = JSON.parse(process.env.PUSOY_CONFORMANCE_BOT ?? "{}") as Script;
const bot = new ConformanceBot(script);
main(bot).then(
  (code) => {
    const want = script.events_total;
    if (code === 0 && want !== undefined && want !== bot.events) checkFailed(`${bot.events} events in the run, not ${want}`);
    process.exit(code);
  },
  (err) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
