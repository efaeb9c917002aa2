package io.pusoyreferee.client;

import com.google.protobuf.Timestamp;
import io.pusoyreferee.referee.v1.TurnPrompt;
import java.time.Duration;
import java.time.Instant;

/**
 * The time a bot has to answer one prompt, on the monotonic clock ({@link System#nanoTime}),
 * never the wall clock (docs/kits.md, section 2):
 *
 * <pre>
 * turn_end = receipt + min(deadline - wall clock at receipt, turn_time)
 * budget   = turn_end + time bank - safety margin
 * </pre>
 *
 * <p>When it runs out the library sends the fallback and interrupts the bot's worker thread;
 * an answer after that is dropped. A long search should check {@link #remaining()} or {@link
 * #expired()}, or stop when interrupted.
 */
public final class Budget {

  /** The turn time the referee uses when a prompt gives neither a deadline nor a limit. */
  public static final Duration DEFAULT_TURN_TIME = Duration.ofMillis(5000);

  private final long endNanos;

  private Budget(long endNanos) {
    this.endNanos = endNanos;
  }

  /** A budget that ends {@code left} from now (tests, and bots that nest budgets). */
  public static Budget of(Duration left) {
    return new Budget(System.nanoTime() + left.toNanos());
  }

  /**
   * The budget of a prompt read off the stream at {@code receiptNanos} ({@link
   * System#nanoTime()}), when the wall clock read {@code wallAtReceipt}.
   *
   * @param margin the safety margin (the time to send the answer)
   * @param useBank whether the seat's time bank counts (it does unless the bot says no)
   */
  public static Budget forPrompt(
      TurnPrompt prompt, long receiptNanos, Instant wallAtReceipt, Duration margin, boolean useBank) {
    Duration turnTime = Duration.ofMillis(Integer.toUnsignedLong(prompt.getTurnTimeMs()));
    Duration span = turnTime;
    if (prompt.hasDeadline()) {
      Duration untilDeadline = Duration.between(wallAtReceipt, toInstant(prompt.getDeadline()));
      if (untilDeadline.isNegative()) {
        untilDeadline = Duration.ZERO; // a clock ahead of the referee's: the turn time decides
      }
      if (span.isZero() || untilDeadline.compareTo(span) < 0) {
        span = untilDeadline;
      }
    } else if (span.isZero()) {
      span = DEFAULT_TURN_TIME;
    }
    if (useBank) {
      span = span.plusMillis(Integer.toUnsignedLong(prompt.getTimeBankMs()));
    }
    return new Budget(receiptNanos + span.minus(margin).toNanos());
  }

  /** The time left, zero once it has run out. */
  public Duration remaining() {
    long left = endNanos - System.nanoTime();
    return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
  }

  /** Whether the budget has run out. */
  public boolean expired() {
    return endNanos - System.nanoTime() <= 0;
  }

  /** The end of the budget on {@link System#nanoTime()}'s clock. */
  public long endNanos() {
    return endNanos;
  }

  @Override
  public String toString() {
    return "Budget[" + remaining().toMillis() + " ms left]";
  }

  static Instant toInstant(Timestamp ts) {
    return Instant.ofEpochSecond(ts.getSeconds(), ts.getNanos());
  }
}
