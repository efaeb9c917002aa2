/**
 * The bot interface: one method to write (`choose`), a few hooks to override if useful.
 */

import { Event, MatchEnded } from "../gen/pusoy/referee/v1/common";
import { Snapshot, Welcome } from "../gen/pusoy/referee/v1/play_service";
import { Choice, fallback, Prompt, Rejection } from "./protocol";

/**
 * A bot. Implement `choose`. The runner calls every method on the main thread, one call
 * at a time, in the order the referee's messages arrived (docs/kits.md); the stream runs
 * in a worker thread, which sends the fallback when `choose` is not done by
 * `prompt.budget` (or throws). A failing hook is reported on stderr; the match goes on.
 */
export abstract class Bot {
  /** The name sent in the Hello and shown in the referee's logs. */
  name = "typescript-bot";
  /** Whether prompts should list the legal plays (you almost always want them). */
  wantLegalPlays = true;
  /** Whether the budget may use the seat's time bank. */
  useTimeBank = true;

  /**
   * The cards to play for this prompt, or PASS, before `prompt.budget.remainingMs()` runs
   * out. May return a Promise; `signal` aborts when the budget ends.
   */
  abstract choose(prompt: Prompt, signal: AbortSignal): Choice | Promise<Choice>;

  /** What to send after a rejection with attempts left; by default the fallback. */
  onRejected(prompt: Prompt, rejection: Rejection, signal: AbortSignal): Choice | Promise<Choice> {
    void rejection;
    void signal;
    return fallback(prompt);
  }

  /** The referee gave the bot its seat (again, after a reconnect). */
  onWelcome(welcome: Welcome): void {
    void welcome;
  }

  /** The seat's view after every welcome: rebuild your state from it. */
  onSnapshot(snapshot: Snapshot): void {
    void snapshot;
  }

  /** Every event the seat receives, its own deal included. */
  onEvent(event: Event): void {
    void event;
  }
}

/** How the match ended for the bot. */
export interface Outcome {
  readonly seat: number;
  readonly matchId: string;
  /** The match_ended event; undefined when the match ended while the bot was away. */
  readonly ended: MatchEnded | undefined;
  /** The seat's place (1 is first), 0 when unknown. */
  readonly place: number;
}

/** The former name of {@link Outcome}. */
export type MatchOutcome = Outcome;

/** The seat's place in a match_ended event, 0 when unknown. */
export function placeOf(seat: number, ended: MatchEnded | undefined): number {
  const standing = ended?.standings.find((s) => s.seats.includes(seat));
  return standing?.place ?? 0;
}
