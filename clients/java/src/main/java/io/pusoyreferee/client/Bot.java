package io.pusoyreferee.client;

import io.pusoyreferee.referee.v1.ActionResult;
import io.pusoyreferee.referee.v1.Event;
import io.pusoyreferee.referee.v1.Snapshot;
import io.pusoyreferee.referee.v1.Welcome;

/**
 * A bot: implement {@link #choose}; override the other methods only if useful.
 *
 * <p>{@link BotRunner} calls {@code choose} on a worker thread and waits for it until the
 * prompt's deadline (minus a small margin); past that it sends {@link #fallback} instead and
 * interrupts the worker (it also gives up on the answer when the stream drops meanwhile). A
 * {@code choose} that ignores interrupts may still be running when the next prompt comes, on
 * another worker thread: keep long searches interruptible. Every other method is called on
 * the runner's own thread, one at a time, in the order the referee's messages arrive.
 */
public interface Bot {

  /**
   * Your move: the cards to play for this prompt, or {@link Choice#pass()}.
   * {@code prompt.legalPlays()} lists every legal play, weakest first. Returning {@code null}
   * passes; throwing sends {@link #fallback}.
   */
  Choice choose(Prompt prompt);

  /** The name sent in the Hello, shown in the referee's logs. */
  default String name() {
    return "java-bot";
  }

  /** Whether prompts should list the legal plays. */
  default boolean wantLegalPlays() {
    return true;
  }

  /**
   * What to send after the referee rejected an answer, while attempts are left for the turn.
   * By default the safest legal answer, {@link #fallback}.
   */
  default Choice onRejected(Prompt prompt, ActionResult result) {
    return fallback(prompt);
  }

  /**
   * The answer sent when {@link #choose} runs past the deadline or throws: by default a pass
   * when allowed, else the weakest legal play.
   */
  default Choice fallback(Prompt prompt) {
    return prompt.fallback();
  }

  /** Called when the referee accepts the seat (again, after a reconnect). */
  default void onWelcome(Welcome welcome) {}

  /** Called with the seat's view right after each welcome (useful after a reconnect). */
  default void onSnapshot(Snapshot snapshot) {}

  /** Called for every public event, and for the seat's own deal. */
  default void onEvent(Event event) {}
}
