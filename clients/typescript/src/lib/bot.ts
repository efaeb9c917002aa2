/**
 * The bot interface: one method to write (`choose`), a few hooks to override if useful.
 */

import { Event, MatchEnded } from "../gen/pusoy/referee/v1/common";
import { Snapshot, Welcome } from "../gen/pusoy/referee/v1/play_service";
import { Choice, fallback, Prompt, Rejection } from "./protocol";

/**
 * A bot. Implement `choose`; the runner calls it for every prompt and sends the answer
 * before the deadline (the fallback if `choose` runs late or throws).
 */
export abstract class Bot {
  /** The name sent in the Hello and shown in the referee's logs. */
  name = "typescript-bot";
  /** Whether prompts should list the legal plays (you almost always want them). */
  wantLegalPlays = true;

  /** The cards to play for this prompt, or PASS. May return a Promise. */
  abstract choose(prompt: Prompt): Choice | Promise<Choice>;

  /**
   * What to send after the referee rejected an answer and the turn has attempts left.
   * By default the fallback.
   */
  onRejected(prompt: Prompt, rejection: Rejection): Choice | Promise<Choice> {
    void rejection;
    return this.fallback(prompt);
  }

  /** The answer used when `choose` is late or fails: pass if allowed, else the weakest play. */
  fallback(prompt: Prompt): Choice {
    return fallback(prompt);
  }

  /** Called when the referee gives the bot its seat (again, after a reconnect). */
  onWelcome(welcome: Welcome): void {
    void welcome;
  }

  /** Called with the seat's view after every welcome (useful to resume after a reconnect). */
  onSnapshot(snapshot: Snapshot): void {
    void snapshot;
  }

  /** Called for every public event, and the seat's own deal. */
  onEvent(event: Event): void {
    void event;
  }
}

/** How the match ended for the bot. */
export interface MatchOutcome {
  readonly seat: number;
  readonly matchId: string;
  /** The match_ended event; undefined when the match ended while the bot was away. */
  readonly ended: MatchEnded | undefined;
  /** The seat's place (1 is first), 0 when unknown. */
  readonly place: number;
}

/** The seat's place in a match_ended event, 0 when unknown. */
export function placeOf(seat: number, ended: MatchEnded | undefined): number {
  const standing = ended?.standings.find((s) => s.seats.includes(seat));
  return standing?.place ?? 0;
}
