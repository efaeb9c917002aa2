/**
 * The library's view of the protocol: a prompt as a bot sees it, the messages a bot
 * sends, and the two safe answers the library falls back on (the fallback and, for
 * testing a bot's recovery, the deliberate misbehaviour).
 *
 * Everything here is pure: no network, no clock. The runner (runner.ts) wires it to a
 * gRPC stream.
 */

import { Combination, combinationToJSON, PublicState, RejectionReason, rejectionReasonToJSON } from "../gen/pusoy/referee/v1/common";
import { ActionResult, PlayRequest, TurnPrompt } from "../gen/pusoy/referee/v1/play_service";

/** The bot protocol version this library speaks. */
export const PROTOCOL_VERSION = 1;

/** Cards to play, such as `["3D", "3C"]`, or {@link PASS}. */
export type Choice = readonly string[] | null;

/** The choice that passes. An empty card list is sent as a pass too. */
export const PASS: Choice = null;

/** A legal play offered by the referee. */
export interface LegalPlay {
  /** The cards, in canonical order (e.g. `["9D", "9S"]`). */
  readonly cards: readonly string[];
  /** The combination they form. */
  readonly combination: Combination;
  /** The combination's name, e.g. `"COMBINATION_PAIR"`. */
  readonly combinationName: string;
}

/**
 * The time left to answer a prompt, on the monotonic clock (`process.hrtime`, the same in
 * every thread of the process): min(deadline, receipt + turn time) + the time bank, less
 * the safety margin (docs/kits.md, section 2).
 */
export class Budget {
  constructor(
    /** When the answer is due, in `process.hrtime.bigint()` nanoseconds. */
    readonly deadlineNs: bigint,
  ) {}

  /** Milliseconds left (0 once expired). */
  remainingMs(): number {
    const left = Number(this.deadlineNs - process.hrtime.bigint()) / 1e6;
    return left > 0 ? left : 0;
  }

  expired(): boolean {
    return process.hrtime.bigint() >= this.deadlineNs;
  }

  /** No limit (a prompt built by hand, in a test). */
  static unlimited(): Budget {
    return new Budget(BigInt(Number.MAX_SAFE_INTEGER) * 1_000_000n);
  }

  /**
   * The budget of a prompt received at `receivedNs` (monotonic) when the wall clock read
   * `wallNowMs`.
   */
  static forPrompt(
    message: Pick<TurnPrompt, "deadline" | "turnTimeMs" | "timeBankMs">,
    receivedNs: bigint,
    wallNowMs: number,
    safetyMarginMs = 50,
    useTimeBank = true,
  ): Budget {
    const turn = message.turnTimeMs > 0 ? message.turnTimeMs : undefined;
    let span: number;
    if (message.deadline !== undefined) {
      const until = Math.max(0, message.deadline.getTime() - wallNowMs);
      span = turn === undefined ? until : Math.min(until, turn);
    } else {
      span = turn ?? DEFAULT_TURN_MS;
    }
    const bank = useTimeBank ? message.timeBankMs : 0;
    return new Budget(receivedNs + BigInt(Math.round((span + bank - safetyMarginMs) * 1e6)));
  }
}

/** The turn time assumed when a prompt carries neither a deadline nor a turn time. */
export const DEFAULT_TURN_MS = 5000;

/** A prompt to act, as the bot sees it. A bot can choose from this alone. */
export interface Prompt {
  /** When the answer is due: `budget.remainingMs()`. */
  readonly budget: Budget;
  /** The id the answer must name (the library does this for you). */
  readonly turnId: bigint;
  /** The bot's seat, 0..3. */
  readonly seat: number;
  /** The hand being played, from 1. */
  readonly handNumber: number;
  /** The turn's deadline (time bank excluded), or undefined when the referee sent none. */
  readonly deadline: Date | undefined;
  /** The per-turn limit in milliseconds. */
  readonly turnTimeMs: number;
  /** The seat's time bank left in milliseconds. */
  readonly timeBankMs: number;
  /** The bot's cards, ascending in card order, e.g. `["3C", "5D", "TD", "2S"]`. */
  readonly hand: readonly string[];
  /** Every legal play, weakest first (empty if the bot did not ask for them). */
  readonly legalPlays: readonly LegalPlay[];
  /** Whether passing is legal. */
  readonly canPass: boolean;
  /** Whether this is a lead (the table is empty). */
  readonly isLead: boolean;
  /** Rejected attempts left in this turn before the referee plays a default action. */
  readonly attemptsLeft: number;
  /** The play to beat, or undefined on a lead. */
  readonly table: LegalPlay | undefined;
  /** The public state of the hand and the match scores. */
  readonly state: PublicState;
  /** The message as received. */
  readonly message: TurnPrompt;
}

/** The referee's verdict on an action that it refused. */
export interface Rejection {
  readonly turnId: bigint;
  readonly reason: RejectionReason;
  /** The reason's name, e.g. `"REJECTION_REASON_CARD_NOT_IN_HAND"`. */
  readonly reasonName: string;
  readonly message: string;
  /** Attempts left in this turn; 0 means the referee takes the default action. */
  readonly attemptsLeft: number;
}

function toLegalPlay(play: { cards: string[]; combination: Combination }): LegalPlay {
  return {
    cards: [...play.cards],
    combination: play.combination,
    combinationName: combinationToJSON(play.combination),
  };
}

/** Turns a TurnPrompt message into the library's {@link Prompt} view. */
export function parsePrompt(message: TurnPrompt, budget: Budget = Budget.unlimited()): Prompt {
  const state = message.state ?? PublicState.fromPartial({});
  const table = state.table && state.table.cards.length > 0 ? toLegalPlay(state.table) : undefined;
  return {
    budget,
    turnId: message.turnId,
    seat: message.seat,
    handNumber: state.handNumber,
    deadline: message.deadline,
    turnTimeMs: message.turnTimeMs,
    timeBankMs: message.timeBankMs,
    hand: [...message.hand],
    legalPlays: message.legalPlays.map(toLegalPlay),
    canPass: message.canPass,
    isLead: message.isLead,
    attemptsLeft: message.attemptsLeft,
    table,
    state,
    message,
  };
}

/** Turns a refused ActionResult into a {@link Rejection}. */
export function parseRejection(result: ActionResult): Rejection {
  return {
    turnId: result.turnId,
    reason: result.reason,
    reasonName: rejectionReasonToJSON(result.reason),
    message: result.message,
    attemptsLeft: result.attemptsLeft,
  };
}

/**
 * The first message of a stream: who the bot is and which seat it takes; `batchEvents`
 * asks for the events batched into the prompts (docs/protocol.md 3.5).
 */
export function helloRequest(token: string, botName: string, wantLegalPlays = true, batchEvents = false): PlayRequest {
  return {
    kind: {
      $case: "hello",
      value: { protocolVersion: PROTOCOL_VERSION, token, wantLegalPlays, botName, batchEvents },
    },
  };
}

/** An action that plays `cards` in turn `turnId`. */
export function playAction(turnId: bigint, cards: readonly string[]): PlayRequest {
  return {
    kind: {
      $case: "action",
      value: { turnId, kind: { $case: "play", value: { cards: [...cards] } }, traceSha256: "" },
    },
  };
}

/** An action that passes in turn `turnId`. */
export function passAction(turnId: bigint): PlayRequest {
  return {
    kind: { $case: "action", value: { turnId, kind: { $case: "pass", value: {} }, traceSha256: "" } },
  };
}

/** The action for a bot's choice: a pass for {@link PASS} or no cards, else a play. */
export function actionFor(turnId: bigint, choice: Choice): PlayRequest {
  return choice === null || choice.length === 0 ? passAction(turnId) : playAction(turnId, choice);
}

/**
 * The safe answer (docs/kits.md, section 4): a pass when allowed, else the weakest legal
 * play, else (no legal plays listed) the opening card or the lowest card of the hand.
 */
export function fallback(prompt: Pick<Prompt, "canPass" | "legalPlays" | "hand" | "state">): Choice {
  if (prompt.canPass) return PASS;
  const weakest = prompt.legalPlays[0];
  if (weakest) return [...weakest.cards];
  const must = prompt.state.mustInclude;
  if (must && prompt.hand.includes(must)) return [must];
  return prompt.hand.length > 0 ? [prompt.hand[0]!] : PASS;
}

/** The first word of the line written when the bot's own code threw on a turn and the
 * library fell back (docs/kits.md, section 5): the referee finds it in the bot's output. */
export const RAISED_MARKER = "PUSOY_BOT_RAISED";

/** Of what was thrown (its name and message), the characters the marker line keeps. */
export const RAISED_MAX_CHARS = 200;

/**
 * The marker line for `err`, thrown by the bot's `call` on turn `turnId`: one line, the
 * error's `name` and `message` (a thrown non-Error: `thrown` and its text), control
 * characters made spaces, at most {@link RAISED_MAX_CHARS} of them.
 */
export function raisedLine(turnId: bigint, call: "choose" | "on_rejected", err: unknown): string {
  let error: string;
  if (err instanceof Error) error = err.message ? `${err.name}: ${err.message}` : err.name;
  else error = `thrown: ${String(err)}`;
  const shown = [...error.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, " ")].slice(0, RAISED_MAX_CHARS).join("");
  return `${RAISED_MARKER} turn=${turnId} call=${call} error=${shown}`;
}

/** A bot's answer as cards (null: a pass); throws when it is neither cards nor PASS. */
export function asCards(choice: unknown): string[] | null {
  if (choice === null || choice === undefined) return null;
  if (typeof choice === "string") {
    const cards = choice.split(/\s+/).filter((c) => c !== "");
    return cards.length > 0 ? cards : null;
  }
  if (Array.isArray(choice) && choice.every((c) => typeof c === "string")) {
    return choice.length > 0 ? [...(choice as string[])] : null;
  }
  throw new TypeError(`not cards or PASS: ${JSON.stringify(choice)}`);
}

/** Ranks and suits in card order (clubs-low suits; any order would do here). */
const RANKS = "3456789TJQKA2";
const SUITS = "CSHD";

/** Every card of the deck in canonical notation, 3C first. */
export const DECK: readonly string[] = [...RANKS].flatMap((r) => [...SUITS].map((s) => r + s));

/** The first card of the deck (3C, 3S, ...) that is not in `hand`. */
export function cardNotInHand(hand: readonly string[]): string {
  const held = new Set(hand.map((c) => c.toUpperCase()));
  const card = DECK.find((c) => !held.has(c));
  if (card === undefined) throw new Error("the hand holds the whole deck");
  return card;
}

/**
 * Deliberate misbehaviour for testing recovery (`--misbehave`): the first answer in each
 * hand is a single card that is not in the bot's hand, which the referee rejects
 * (CARD_NOT_IN_HAND); the library then answers again through the rejection hook.
 */
export class Misbehaviour {
  private lastHand = -1;

  /** The bad play to send for this prompt, or undefined when the bot should play normally. */
  choose(prompt: Prompt): Choice | undefined {
    if (prompt.handNumber === this.lastHand) return undefined;
    this.lastHand = prompt.handNumber;
    return [cardNotInHand(prompt.hand)];
  }
}
