/**
 * The stream's side of the runner, in a worker thread of its own (docs/kits.md, section 3).
 *
 * It holds the gRPC stream, reads every message as it comes, passes each to the main
 * thread (where the bot's code runs, one call at a time), and keeps the turn's timer: when
 * the budget runs out before the bot's answer comes back, it sends the fallback itself, so
 * a `choose` that blocks the main thread cannot make the seat miss its turn. It also
 * reconnects within the window.
 */

import { Client, ServiceError, status } from "@grpc/grpc-js";
import { parentPort, workerData } from "node:worker_threads";
import { Event } from "../gen/pusoy/referee/v1/common";
import {
  ActionResult,
  PlayRequest,
  PlayResponse,
  PlayServiceClient,
  RefusalReason,
  refusalReasonToJSON,
  Snapshot,
  TurnPrompt,
  Welcome,
} from "../gen/pusoy/referee/v1/play_service";
import { channelCredentials, channelOptions, Options, RECONNECT_WINDOW_MS, SAFETY_MARGIN_MS } from "./options";
import { actionFor, Budget, fallback, helloRequest, parsePrompt } from "./protocol";

/** What the main thread gives the worker. */
export interface WorkerConfig {
  options: Options;
  name: string;
  wantLegalPlays: boolean;
  useTimeBank: boolean;
}

/** Messages from the worker to the main thread, in the order they happen. */
export type ToMain =
  | { type: "welcome" | "snapshot" | "event"; data: Uint8Array }
  | { type: "prompt"; data: Uint8Array; turnId: bigint; attempt: number; deadlineNs: bigint }
  | { type: "rejected"; data: Uint8Array; turnId: bigint; attempt: number }
  | { type: "log"; line: string }
  | { type: "done"; seat: number; matchId: string; ended: Uint8Array | undefined }
  | { type: "failed"; kind: "refused" | "unreachable" | "rpc" | "usage" | "internal"; message: string };

/** The bot's answer, from the main thread; `cards` undefined: no usable answer. */
export interface Answer {
  type: "answer";
  turnId: bigint;
  attempt: number;
  cards: string[] | null | undefined;
}

const RETRYABLE = new Set<number>([status.UNAVAILABLE, status.CANCELLED, status.INTERNAL, status.UNKNOWN, status.DEADLINE_EXCEEDED]);
const RETRIED_REFUSALS = new Set<RefusalReason>([RefusalReason.REFUSAL_REASON_SEAT_TAKEN, RefusalReason.REFUSAL_REASON_SHUTTING_DOWN]);
const BACKOFF_FIRST_MS = 50;
const BACKOFF_MAX_MS = 1000;

class Refused extends Error {
  constructor(readonly reason: RefusalReason, message: string) {
    super(`${refusalReasonToJSON(reason)}: ${message}`);
  }
}

interface Turn {
  id: bigint;
  message: TurnPrompt;
  budget: Budget;
  attempt: number;
  answered: number; // the last attempt answered (-1: none)
  closed: boolean;
  sent: (string[] | null)[];
  timer: NodeJS.Timeout | undefined;
}

function same(a: string[] | null, b: string[] | null | undefined): boolean {
  if (a === null || b === null || b === undefined) return a === b;
  return a.length === b.length && [...a].sort().join(" ") === [...b].sort().join(" ");
}

class Seat {
  seat = -1;
  matchId = "";
  welcomed = false;
  turn: Turn | undefined;
  private write: ((r: PlayRequest) => void) | undefined;

  constructor(
    readonly cfg: WorkerConfig,
    readonly post: (m: ToMain) => void,
  ) {}

  log(line: string): void {
    this.post({ type: "log", line });
  }

  /** One stream: the match_ended event when the match ended, undefined when it dropped. */
  async playOnce(client: PlayServiceClient): Promise<{ ended: Event | undefined } | undefined> {
    const call = client.play();
    call.on("error", () => {}); // failures reach us through the iterator
    this.write = (r) => {
      if (!call.writableEnded && !call.destroyed) call.write(r);
    };
    this.write(helloRequest(this.cfg.options.token, this.cfg.name, this.cfg.wantLegalPlays, this.cfg.options.batchEvents ?? false));
    try {
      for await (const message of call as AsyncIterable<PlayResponse>) {
        const kind = message.kind;
        if (kind === undefined) continue;
        if (this.cfg.options.debug) this.log(`got ${kind.$case}${kind.$case === "event" ? " " + kind.value.kind?.$case : ""}`);
        switch (kind.$case) {
          case "welcome":
            this.seat = kind.value.seat;
            this.matchId = kind.value.matchId;
            this.welcomed = true;
            this.post({ type: "welcome", data: Welcome.encode(kind.value).finish() });
            break;
          case "snapshot":
            this.post({ type: "snapshot", data: Snapshot.encode(kind.value).finish() });
            break;
          case "refusal":
            if (this.seat >= 0 && kind.value.reason === RefusalReason.REFUSAL_REASON_MATCH_OVER) return { ended: undefined };
            throw new Refused(kind.value.reason, kind.value.message);
          case "prompt":
            // Batched: the events since the last prompt reach the bot before its turn.
            for (const event of kind.value.events) this.deliver(event);
            this.onPrompt(kind.value);
            break;
          case "result":
            this.onResult(kind.value);
            break;
          case "event":
            if (this.deliver(kind.value)) return { ended: kind.value };
            break;
          case "batch":
            for (const event of kind.value.events) {
              if (this.deliver(event)) return { ended: event };
            }
            break;
        }
      }
    } finally {
      this.close();
      this.write = undefined;
      call.end();
      call.cancel();
    }
    return undefined;
  }

  /** One event to the bot, live or batched alike; true for the match's end. */
  private deliver(event: Event): boolean {
    this.post({ type: "event", data: Event.encode(event).finish() });
    const body = event.kind;
    if (this.turn && (body?.$case === "played" || body?.$case === "passed") && body.value.turnId === this.turn.id) this.close();
    return body?.$case === "matchEnded";
  }

  private close(): void {
    if (this.turn) {
      this.turn.closed = true;
      clearTimeout(this.turn.timer);
    }
  }

  private onPrompt(message: TurnPrompt): void {
    const receivedNs = process.hrtime.bigint();
    const budget = Budget.forPrompt(
      message,
      receivedNs,
      Date.now(),
      this.cfg.options.safetyMarginMs ?? SAFETY_MARGIN_MS,
      this.cfg.useTimeBank,
    );
    this.close();
    const turn: Turn = { id: message.turnId, message, budget, attempt: 0, answered: -1, closed: false, sent: [], timer: undefined };
    this.turn = turn;
    this.post({ type: "prompt", data: TurnPrompt.encode(message).finish(), turnId: turn.id, attempt: 0, deadlineNs: budget.deadlineNs });
    this.arm(turn, 0);
  }

  private onResult(result: ActionResult): void {
    const turn = this.turn;
    if (!turn || turn.closed || result.turnId !== turn.id) return; // a stale answer's verdict
    if (result.accepted || result.attemptsLeft <= 0) {
      this.close();
      return;
    }
    clearTimeout(turn.timer);
    turn.attempt += 1;
    this.post({ type: "rejected", data: ActionResult.encode(result).finish(), turnId: turn.id, attempt: turn.attempt });
    this.arm(turn, turn.attempt);
  }

  /** At the budget's end, the fallback goes out unless the bot answered this attempt. */
  private arm(turn: Turn, attempt: number): void {
    turn.timer = setTimeout(() => {
      if (turn.closed || turn.attempt !== attempt || turn.answered >= attempt) return;
      this.log(`turn ${turn.id}: the bot is past its budget; sending the fallback`);
      this.send(turn, attempt, undefined);
    }, turn.budget.remainingMs());
  }

  /** The bot's answer (undefined: the fallback) for `attempt` of the open turn. */
  answer(a: Answer): void {
    const turn = this.turn;
    if (!turn || turn.closed || a.turnId !== turn.id || a.attempt !== turn.attempt || turn.answered >= a.attempt) return; // late: dropped
    this.send(turn, a.attempt, a.cards);
  }

  private send(turn: Turn, attempt: number, cards: string[] | null | undefined): void {
    turn.answered = attempt;
    clearTimeout(turn.timer);
    const choice = cards === undefined ? fallback(parsePrompt(turn.message)) : cards;
    const asList = choice === null ? null : [...choice];
    if (attempt > 0 && turn.sent.length > 0 && same(asList, turn.sent[turn.sent.length - 1])) return; // the fallback was just rejected
    turn.sent.push(asList);
    this.write?.(actionFor(turn.id, asList));
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function main(cfg: WorkerConfig, post: (m: ToMain) => void): Promise<void> {
  const options = cfg.options;
  const windowMs = options.reconnectWindowMs ?? RECONNECT_WINDOW_MS;
  let client: PlayServiceClient;
  try {
    client = new PlayServiceClient(options.address, channelCredentials(options), channelOptions(options));
  } catch (err) {
    post({ type: "failed", kind: "usage", message: err instanceof Error ? err.message : String(err) });
    return;
  }
  const seat = new Seat(cfg, post);
  parentPort?.on("message", (m: Answer) => seat.answer(m));
  let windowStart = performance.now();
  let retries = 0;
  let lastRefusal: Refused | undefined;
  let lastError = "no answer";
  try {
    for (;;) {
      seat.welcomed = false;
      try {
        const got = await seat.playOnce(client);
        if (got !== undefined) {
          post({ type: "done", seat: seat.seat, matchId: seat.matchId, ended: got.ended ? Event.encode(got.ended).finish() : undefined });
          return;
        }
        lastError = "the stream ended before the match did";
      } catch (err) {
        if (err instanceof Refused) {
          if (!RETRIED_REFUSALS.has(err.reason)) {
            post({ type: "failed", kind: "refused", message: err.message });
            return;
          }
          lastRefusal = err;
        } else {
          const code = (err as Partial<ServiceError>)?.code;
          const text = (err as Error)?.message ?? String(err);
          if (code === undefined || !RETRYABLE.has(code)) {
            post({ type: "failed", kind: code === undefined ? "internal" : "rpc", message: text });
            return;
          }
          lastError = text;
        }
      }
      if (seat.welcomed) {
        seat.log(`lost the stream (${lastError}); reconnecting`);
        windowStart = performance.now();
        retries = 0;
        lastRefusal = undefined;
      }
      const left = windowStart + windowMs - performance.now();
      if (left <= 0) {
        if (lastRefusal) post({ type: "failed", kind: "refused", message: lastRefusal.message });
        else post({ type: "failed", kind: "unreachable", message: `could not reach the referee at ${options.address}: ${lastError}` });
        return;
      }
      if (retries > 0) {
        const d = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (retries - 1));
        await sleep(Math.min(left, d / 2 + (Math.random() * d) / 2));
      }
      retries += 1;
    }
  } finally {
    (client as unknown as Client).close();
    parentPort?.removeAllListeners("message");
  }
}

if (parentPort !== null) {
  const port = parentPort;
  const post = (m: ToMain): void => port.postMessage(m);
  main(workerData as WorkerConfig, post).catch((err: unknown) =>
    post({ type: "failed", kind: "internal", message: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
}
