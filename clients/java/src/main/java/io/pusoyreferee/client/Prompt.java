package io.pusoyreferee.client;

import com.google.protobuf.Timestamp;
import io.pusoyreferee.referee.v1.PublicState;
import io.pusoyreferee.referee.v1.TurnPrompt;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The library's view of a {@code TurnPrompt}: everything a bot needs to answer its turn.
 *
 * @param turnId the id the answer must name (the library does that)
 * @param seat this bot's seat, 0..3
 * @param deadline when the turn ends (time bank excluded); when the referee sent none, the
 *     time of receipt plus the per-turn limit
 * @param turnTime the per-turn limit
 * @param timeBank the seat's time bank left, drawn on when the deadline passes
 * @param hand the seat's cards, ascending in card order
 * @param legalPlays every legal play, weakest first (empty if the bot did not ask for them)
 * @param canPass whether a pass is legal
 * @param isLead whether this is a lead (the table is empty)
 * @param attemptsLeft rejected attempts left in this turn before the referee plays for the
 *     seat
 * @param state the public state of the hand (table, card counts, trick, totals, ...)
 * @param receivedAt when the prompt arrived, by this machine's clock
 */
public record Prompt(
    long turnId,
    int seat,
    Instant deadline,
    Duration turnTime,
    Duration timeBank,
    List<String> hand,
    List<CardPlay> legalPlays,
    boolean canPass,
    boolean isLead,
    int attemptsLeft,
    PublicState state,
    Instant receivedAt) {

  public Prompt {
    hand = List.copyOf(hand);
    legalPlays = List.copyOf(legalPlays);
  }

  /** The view of a prompt received now. */
  public static Prompt from(TurnPrompt prompt) {
    return from(prompt, Instant.now());
  }

  /** The view of a prompt received at {@code receivedAt}. */
  public static Prompt from(TurnPrompt prompt, Instant receivedAt) {
    Duration turnTime = Duration.ofMillis(Integer.toUnsignedLong(prompt.getTurnTimeMs()));
    Instant deadline =
        prompt.hasDeadline() ? toInstant(prompt.getDeadline()) : receivedAt.plus(turnTime);
    return new Prompt(
        prompt.getTurnId(),
        prompt.getSeat(),
        deadline,
        turnTime,
        Duration.ofMillis(Integer.toUnsignedLong(prompt.getTimeBankMs())),
        prompt.getHandList(),
        prompt.getLegalPlaysList().stream().map(CardPlay::from).toList(),
        prompt.getCanPass(),
        prompt.getIsLead(),
        prompt.getAttemptsLeft(),
        prompt.getState(),
        receivedAt);
  }

  /** The hand being played, from 1. */
  public int handNumber() {
    return state.getHandNumber();
  }

  /** The play on the table, if any (none on a lead). */
  public Optional<CardPlay> table() {
    return state.hasTable() && state.getTable().getCardsCount() > 0
        ? Optional.of(CardPlay.from(state.getTable()))
        : Optional.empty();
  }

  /** The seat that made the play on the table, if any. */
  public OptionalInt tableSeat() {
    return state.hasTableSeat() ? OptionalInt.of(state.getTableSeat()) : OptionalInt.empty();
  }

  /** The card the next play must contain (the opening card), or "". */
  public String mustInclude() {
    return state.getMustInclude();
  }

  /** Cards left in each seat's hand, seats 0..3. */
  public List<Integer> cardCounts() {
    return state.getCardCountsList();
  }

  /**
   * The last moment an answer counts, by this machine's clock: the deadline plus the time
   * bank. The deadline is the referee's wall-clock time; in case this machine's clock is
   * behind the referee's, it is never taken later than the receipt plus the per-turn limit.
   */
  public Instant latestAnswer() {
    Instant byClock = deadline;
    if (!turnTime.isZero()) {
      Instant byReceipt = receivedAt.plus(turnTime);
      if (byReceipt.isBefore(byClock)) {
        byClock = byReceipt;
      }
    }
    return byClock.plus(timeBank);
  }

  /**
   * The safest answer: a pass when allowed, else the weakest legal play; without a list of
   * legal plays, the lowest card of the hand alone.
   */
  public Choice fallback() {
    if (canPass) {
      return Choice.pass();
    }
    if (!legalPlays.isEmpty()) {
      return Choice.play(legalPlays.get(0));
    }
    if (!hand.isEmpty()) {
      return Choice.play(hand.get(0));
    }
    return Choice.pass();
  }

  private static Instant toInstant(Timestamp ts) {
    return Instant.ofEpochSecond(ts.getSeconds(), ts.getNanos());
  }
}
