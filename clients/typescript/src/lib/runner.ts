/**
 * Connects a Bot to a referee and plays its seat to the end of the match: hello with the
 * seat token, answers before each deadline, a second answer after a rejection, and
 * reconnects with the same token when the stream drops.
 */

import { credentials, ServiceError, status } from "@grpc/grpc-js";
import { PlayRequest, PlayResponse, PlayServiceClient, Refusal, RefusalReason, refusalReasonToJSON } from "../gen/pusoy/referee/v1/play_service";
import { Bot, MatchOutcome, placeOf } from "./bot";
import { actionFor, answerBy, Choice, helloRequest, Misbehaviour, parsePrompt, parseRejection, Prompt } from "./protocol";

/** Give up reconnecting after this long without getting the seat back. */
export const RECONNECT_WINDOW_MS = 30_000;
/** Answer this long before the deadline when the bot's own choice runs late. */
export const DEADLINE_MARGIN_MS = 50;
/** Back-off between reconnect attempts: the first is immediate, then this, doubling... */
export const BACKOFF_INITIAL_MS = 50;
/** ...up to this. */
export const BACKOFF_MAX_MS = 1_000;

/** Stream failures after which the runner reconnects (a clean end does too). */
const RETRYABLE = new Set<number>([status.UNAVAILABLE, status.CANCELLED, status.INTERNAL, status.UNKNOWN]);

/** The referee refused the seat (bad token, seat taken, version, match over...). */
export class BotRefused extends Error {
  readonly reasonName: string;
  constructor(readonly refusal: Refusal) {
    const name = refusalReasonToJSON(refusal.reason);
    super(`${name}: ${refusal.message}`);
    this.name = "BotRefused";
    this.reasonName = name;
  }
}

/** The referee could not be reached (or reached again) within the reconnect window. */
export class RefereeUnreachable extends Error {
  constructor(message: string, readonly lastError?: unknown) {
    super(message);
    this.name = "RefereeUnreachable";
  }
}

export interface RunOptions {
  /** host:port of the referee, e.g. "127.0.0.1:50051". */
  address: string;
  /** The seat's secret token. */
  token: string;
  /** Send a card not in hand as the first answer of each hand (to test recovery). */
  misbehave?: boolean;
  /** Give up reconnecting after this long (ms) without getting the seat back. */
  reconnectWindowMs?: number;
  /** Answer this long (ms) before the deadline when the bot runs late. */
  deadlineMarginMs?: number;
  /** Where the runner's notes go; by default stderr, with the time. */
  log?: (line: string) => void;
  /** Also note every message received and every stream's end. */
  debug?: boolean;
}

/** What the runner keeps across reconnects. */
interface Session {
  seat: number;
  matchId: string;
  welcomedThisStream: boolean;
  misbehaviour: Misbehaviour | undefined;
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs a bot's hook; a hook that throws is noted and the match goes on. */
function safely(log: (line: string) => void, hook: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    log(`${hook} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }
}

const LATE = Symbol("late");

/**
 * Runs `produce` (the bot's own logic) and returns its choice, or `bot.fallback` when it
 * throws or is not done by the prompt's deadline (time bank included) less `marginMs`.
 */
export async function decide(
  bot: Bot,
  prompt: Prompt,
  produce: () => Choice | Promise<Choice> = () => bot.choose(prompt),
  marginMs: number = DEADLINE_MARGIN_MS,
  log: (line: string) => void = () => {},
): Promise<Choice> {
  const by = answerBy(prompt, marginMs);
  let result: Choice | Promise<Choice>;
  try {
    result = produce();
  } catch (err) {
    log(`the bot failed (${describe(err)}); sending the fallback`);
    return bot.fallback(prompt);
  }
  if (!isThenable(result)) {
    if (Date.now() > by) {
      log(`the bot answered after the deadline; sending the fallback`);
      return bot.fallback(prompt);
    }
    return result;
  }
  result.catch(() => {}); // a late promise may still fail; nobody waits for it then
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    if (Number.isFinite(by)) timer = setTimeout(() => resolve(LATE), Math.max(0, by - Date.now()));
  });
  try {
    const choice = await Promise.race([result, late]);
    if (choice === LATE) {
      log(`the bot is past the deadline; sending the fallback`);
      return bot.fallback(prompt);
    }
    return choice;
  } catch (err) {
    log(`the bot failed (${describe(err)}); sending the fallback`);
    return bot.fallback(prompt);
  } finally {
    clearTimeout(timer);
  }
}

/** One stream: the outcome when the match ended, undefined when the stream ended early. */
async function playOnce(
  bot: Bot,
  client: PlayServiceClient,
  options: Required<Omit<RunOptions, "misbehave">>,
  session: Session,
): Promise<MatchOutcome | undefined> {
  const log = options.log;
  const call = client.play();
  call.on("error", () => {}); // failures reach us through the iterator below
  const send = (request: PlayRequest): void => {
    if (!call.writableEnded && !call.destroyed) call.write(request);
  };
  const outcome = (ended: PlayResponse["kind"] & { $case: "event" } | undefined): MatchOutcome => {
    const matchEnded = ended?.value.kind?.$case === "matchEnded" ? ended.value.kind.value : undefined;
    return { seat: session.seat, matchId: session.matchId, ended: matchEnded, place: placeOf(session.seat, matchEnded) };
  };

  send(helloRequest(options.token, bot.name, bot.wantLegalPlays));
  let prompt: Prompt | undefined;
  try {
    for await (const message of call as AsyncIterable<PlayResponse>) {
      const kind = message.kind;
      if (kind === undefined) continue;
      if (options.debug) log(`got ${kind.$case}${kind.$case === "event" ? " " + kind.value.kind?.$case : ""}`);
      switch (kind.$case) {
        case "welcome":
          session.seat = kind.value.seat;
          session.matchId = kind.value.matchId;
          session.welcomedThisStream = true;
          log(`seat ${kind.value.seat} of match ${kind.value.matchId}${kind.value.reconnect ? " (reconnected)" : ""}`);
          safely(log, "onWelcome", () => bot.onWelcome(kind.value));
          break;
        case "refusal":
          if (session.seat >= 0 && kind.value.reason === RefusalReason.REFUSAL_REASON_MATCH_OVER) {
            log("the match ended while the bot was away");
            return outcome(undefined);
          }
          throw new BotRefused(kind.value);
        case "snapshot":
          safely(log, "onSnapshot", () => bot.onSnapshot(kind.value));
          break;
        case "prompt": {
          const current = parsePrompt(kind.value);
          prompt = current;
          const bad = session.misbehaviour?.choose(current);
          const choice = bad ?? (await decide(bot, current, () => bot.choose(current), options.deadlineMarginMs, log));
          send(actionFor(current.turnId, choice));
          break;
        }
        case "result": {
          const result = kind.value;
          if (result.accepted) break;
          const rejection = parseRejection(result);
          log(`turn ${result.turnId} rejected: ${rejection.reasonName} (${result.message}); ${result.attemptsLeft} attempts left`);
          if (prompt !== undefined && result.turnId === prompt.turnId && result.attemptsLeft > 0) {
            const current = prompt;
            const choice = await decide(bot, current, () => bot.onRejected(current, rejection), options.deadlineMarginMs, log);
            send(actionFor(current.turnId, choice));
          }
          break;
        }
        case "event":
          safely(log, "onEvent", () => bot.onEvent(kind.value));
          if (kind.value.kind?.$case === "matchEnded") return outcome(kind);
          break;
      }
    }
  } finally {
    call.end();
    call.cancel();
  }
  return undefined;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Plays the seat of `options.token` until the match ends, reconnecting after dropped
 * streams. Resolves with the outcome; rejects with {@link BotRefused} or
 * {@link RefereeUnreachable}.
 */
export async function run(bot: Bot, options: RunOptions): Promise<MatchOutcome> {
  const opts = {
    address: options.address,
    token: options.token,
    reconnectWindowMs: options.reconnectWindowMs ?? RECONNECT_WINDOW_MS,
    deadlineMarginMs: options.deadlineMarginMs ?? DEADLINE_MARGIN_MS,
    debug: options.debug ?? false,
    log: options.log ?? ((line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 23)} ${bot.name}: ${line}\n`)),
  };
  const session: Session = {
    seat: -1,
    matchId: "",
    welcomedThisStream: false,
    misbehaviour: options.misbehave ? new Misbehaviour() : undefined,
  };
  const client = new PlayServiceClient(opts.address, credentials.createInsecure(), {
    "grpc.initial_reconnect_backoff_ms": BACKOFF_INITIAL_MS,
    "grpc.max_reconnect_backoff_ms": BACKOFF_MAX_MS,
  });
  try {
    let windowStart = Date.now();
    let delay = 0; // the first reconnect is immediate, then back off
    let lastError: unknown;
    for (;;) {
      session.welcomedThisStream = false;
      try {
        const outcome = await playOnce(bot, client, opts, session);
        if (outcome !== undefined) return outcome;
        lastError = new Error("the stream ended before the match did");
      } catch (err) {
        if (err instanceof BotRefused) {
          // Right after a drop the referee may still hold the old stream: retry.
          if (err.refusal.reason !== RefusalReason.REFUSAL_REASON_SEAT_TAKEN || session.seat < 0) throw err;
        } else if (!RETRYABLE.has((err as Partial<ServiceError>)?.code ?? -1)) {
          throw err;
        }
        lastError = err;
      }
      if (opts.debug) opts.log(`stream over: ${describe(lastError)}`);
      if (session.welcomedThisStream) {
        opts.log(`the stream dropped (${describe(lastError)}); reconnecting`);
        windowStart = Date.now();
        delay = 0;
      }
      if (Date.now() - windowStart > opts.reconnectWindowMs) {
        throw new RefereeUnreachable(`could not reach the referee at ${opts.address}: ${describe(lastError)}`, lastError);
      }
      await sleep(delay);
      delay = Math.min(Math.max(delay * 2, BACKOFF_INITIAL_MS), BACKOFF_MAX_MS);
    }
  } finally {
    client.close();
  }
}
