/**
 * The TypeScript kit's conformance bot: a bot whose behaviour the transcript scripts
 * (clients/conformance/README.md), run through the kit's own `main`.
 */

import { Bot, Choice, fallback, main, PASS, Prompt, Rejection } from "../lib";

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
}

/** Blocks the main thread (a busy bot that ignores its budget). */
function block(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

class ConformanceBot extends Bot {
  name = "typescript-conformance";

  constructor(private readonly script: Script) {
    super();
    this.wantLegalPlays = script.want_legal_plays ?? true;
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

  onWelcome(): void {
    this.throws("on_welcome");
  }

  onSnapshot(): void {
    this.throws("on_snapshot");
  }

  onEvent(): void {
    this.throws("on_event");
  }
}

const script = JSON.parse(process.env.PUSOY_CONFORMANCE_BOT ?? "{}") as Script;
main(new ConformanceBot(script)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
