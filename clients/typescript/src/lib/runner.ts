/**
 * Plays a bot's seat to the end of the match (docs/kits.md): the stream runs in a worker
 * thread (io_worker.ts); the bot's code runs here, on the main thread, one call at a time,
 * in the order the referee's messages arrived.
 */

import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { Event, MatchEnded } from "../gen/pusoy/referee/v1/common";
import { ActionResult, Snapshot, TurnPrompt, Welcome } from "../gen/pusoy/referee/v1/play_service";
import { Bot, Outcome, placeOf } from "./bot";
import { Answer, ToMain, WorkerConfig } from "./io_worker";
import { Options, UsageError } from "./options";
import { asCards, Budget, Choice, Misbehaviour, parsePrompt, parseRejection, Prompt, raisedLine } from "./protocol";

/** The referee refused the seat (exit 2). */
export class Refused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Refused";
  }
}

/** No seat within the reconnect window (exit 3). */
export class Unreachable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Unreachable";
  }
}

/** The stream failed in a way a reconnect cannot fix (exit 4). */
export class RpcFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RpcFailed";
  }
}

/** At the match's end, how long the bot's last hooks may take before `run` resolves. */
const DRAIN_MS = 2000;

function describe(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/**
 * Plays the seat of `options.token` until the match ends. Resolves with the outcome;
 * rejects with {@link Refused}, {@link Unreachable}, {@link RpcFailed}, or a UsageError.
 */
export function run(bot: Bot, options: Options): Promise<Outcome> {
  const log = (line: string): void => {
    process.stderr.write(`${new Date().toISOString().slice(11, 23)} ${bot.name}: ${line}\n`);
  };
  const config: WorkerConfig = { options, name: bot.name, wantLegalPlays: bot.wantLegalPlays, useTimeBank: bot.useTimeBank };
  const worker = new Worker(join(__dirname, "io_worker.js"), { workerData: config });
  const misbehaviour = options.misbehave ? new Misbehaviour() : undefined;
  const prompts = new Map<bigint, Prompt>();

  const answer = (turnId: bigint, attempt: number, cards: string[] | null | undefined) => {
    const a: Answer = { type: "answer", turnId, attempt, cards };
    worker.postMessage(a);
  };

  /**
   * Runs a bot method for turn `turnId` under the budget; the cards, or undefined (the
   * fallback) when it threw (then the raised marker, docs/kits.md section 5) or gave no
   * cards.
   */
  async function ask(
    what: "choose" | "on_rejected",
    turnId: bigint,
    budget: Budget,
    call: (signal: AbortSignal) => Choice | Promise<Choice>,
  ): Promise<string[] | null | undefined> {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), budget.remainingMs());
    let result: Choice;
    try {
      const answer = call(ctl.signal);
      result = isThenable(answer) ? await answer : answer;
    } catch (err) {
      log(`${what} failed: ${describe(err)}`);
      // Aborted at its budget, it was late: the fallback went out then, and it is no raise.
      if (!ctl.signal.aborted) process.stderr.write(raisedLine(turnId, what, err) + "\n");
      return undefined;
    } finally {
      clearTimeout(timer);
    }
    try {
      return asCards(result);
    } catch (err) {
      log(`${what} answered ${describe(err)}: fallback`);
      return undefined;
    }
  }

  function hook(name: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      log(`${name} failed: ${describe(err)}`);
    }
  }

  async function handle(m: ToMain): Promise<Outcome | Error | undefined> {
    switch (m.type) {
      case "log":
        log(m.line);
        return undefined;
      case "welcome":
        hook("onWelcome", () => bot.onWelcome(Welcome.decode(m.data)));
        return undefined;
      case "snapshot":
        hook("onSnapshot", () => bot.onSnapshot(Snapshot.decode(m.data)));
        return undefined;
      case "event":
        hook("onEvent", () => bot.onEvent(Event.decode(m.data)));
        return undefined;
      case "prompt": {
        const prompt = parsePrompt(TurnPrompt.decode(m.data), new Budget(m.deadlineNs));
        prompts.clear();
        prompts.set(m.turnId, prompt);
        if (prompt.budget.expired()) return undefined; // the worker sent the fallback already
        const bad = misbehaviour?.choose(prompt);
        const cards = bad !== undefined ? asCards(bad) : await ask("choose", m.turnId, prompt.budget, (signal) => bot.choose(prompt, signal));
        answer(m.turnId, m.attempt, cards);
        return undefined;
      }
      case "rejected": {
        const prompt = prompts.get(m.turnId);
        if (prompt === undefined || prompt.budget.expired()) return undefined;
        const rejection = parseRejection(ActionResult.decode(m.data));
        const cards = await ask("on_rejected", m.turnId, prompt.budget, (signal) => bot.onRejected(prompt, rejection, signal));
        answer(m.turnId, m.attempt, cards);
        return undefined;
      }
      case "done": {
        let ended: MatchEnded | undefined;
        if (m.ended !== undefined) {
          const event = Event.decode(m.ended);
          if (event.kind?.$case === "matchEnded") ended = event.kind.value;
        }
        return { seat: m.seat, matchId: m.matchId, ended, place: placeOf(m.seat, ended) };
      }
      case "failed":
        if (m.kind === "refused") return new Refused(m.message);
        if (m.kind === "unreachable") return new Unreachable(m.message);
        if (m.kind === "rpc") return new RpcFailed(m.message);
        if (m.kind === "usage") return new UsageError(m.message);
        return new Error(m.message);
    }
  }

  return new Promise<Outcome>((resolve, reject) => {
    let chain: Promise<void> = Promise.resolve();
    let settled = false;
    const finish = (value: Outcome | Error) => {
      if (settled) return;
      settled = true;
      void worker.terminate();
      if (value instanceof Error) reject(value);
      else resolve(value);
    };
    worker.on("message", (m: ToMain) => {
      if (m.type === "done" || m.type === "failed") {
        // The end: let the hooks queued before it run, but not for ever.
        const drained = new Promise<void>((r) => setTimeout(r, DRAIN_MS).unref());
        void handle(m).then((value) => Promise.race([chain, drained]).then(() => {
          if (value !== undefined) finish(value);
        }));
        return;
      }
      chain = chain.then(() => handle(m)).then(
        () => undefined,
        (err: unknown) => log(`internal error: ${describe(err)}`),
      );
    });
    worker.on("error", (err) => finish(err instanceof Error ? err : new Error(String(err))));
    worker.on("exit", (code) => finish(new Error(`the stream's worker stopped (exit ${code})`)));
  });
}
