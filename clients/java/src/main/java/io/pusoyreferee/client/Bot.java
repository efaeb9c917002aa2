package io.pusoyreferee.client;

import io.pusoyreferee.referee.v1.Event;
import io.pusoyreferee.referee.v1.Snapshot;
import io.pusoyreferee.referee.v1.Welcome;

/**
 * A bot: implement {@link #choose}; override the other methods only if useful.
 *
 * <p>Every method runs on one worker thread of the library's, one call at a time, in the
 * order the referee's messages arrived (docs/kits.md, section 3): a bot needs no locking.
 * The stream is read on another thread meanwhile, so a slow {@code choose} never stalls
 * it. When {@code choose} has not answered by {@code prompt.budget()}, the library sends
 * {@link Fallback#of} for that turn at once and interrupts the worker; the late answer is
 * dropped. A {@code choose} that ignores interrupts only delays the calls queued behind
 * it (the next prompt may then get the fallback too); it never runs beside them.
 *
 * <p>Every call is guarded: a {@code Throwable} from {@code choose} sends the fallback, one
 * from a hook loses only that call; either is reported in one line on stderr.
 */
public interface Bot {

  /**
   * Your move for this prompt: {@code Choice.play(...)} or {@link Choice#pass()}. {@code
   * prompt.legalPlays()} lists every legal play, weakest first; empty means a pass is the
   * only legal action. Answer within {@code prompt.budget().remaining()}. Returning {@code
   * null} sends the fallback.
   */
  Choice choose(Prompt prompt);

  /** The name sent in the Hello, shown in the referee's logs. */
  default String name() {
    return "java-bot";
  }

  /** Whether prompts should list the legal plays (they should, unless you generate them). */
  default boolean wantLegalPlays() {
    return true;
  }

  /** Whether the seat's time bank counts in {@link Prompt#budget()} (docs/kits.md, section 2). */
  default boolean useTimeBank() {
    return true;
  }

  /**
   * What to send after the referee rejected an answer for the open turn while attempts are
   * left, under the same budget. By default the fallback. An answer equal to the one just
   * rejected is not sent again: the referee then acts for the seat at its deadline.
   */
  default Choice onRejected(Prompt prompt, Rejection rejection) {
    return Fallback.of(prompt);
  }

  /** Called when the referee gives the bot its seat (again, after a reconnect). */
  default void onWelcome(Welcome welcome) {}

  /** Called with the seat's view right after each welcome (useful after a reconnect). */
  default void onSnapshot(Snapshot snapshot) {}

  /**
   * Called for every match event the seat may see, its own deal included, in order; with
   * batched events, for each event of a prompt (before {@code choose}) or of a batch.
   */
  default void onEvent(Event event) {}
}
