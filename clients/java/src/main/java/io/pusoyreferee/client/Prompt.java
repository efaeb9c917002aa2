package io.pusoyreferee.client;

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
 * @param deadline when the turn ends by the referee's wall clock (time bank excluded); the
 *     receipt plus the per-turn limit when the referee sent none. Time a turn with {@link
 *     #budget()}, which guards against a clock that differs from the referee's.
 * @param turnTime the per-turn limit
 * @param timeBank the seat's time bank left, drawn on when the turn time is used up
 * @param hand the seat's cards, ascending in card order
 * @param legalPlays every legal play, weakest first; empty when a pass is the only legal
 *     action (or when the bot did not ask for them)
 * @param canPass whether a pass is legal
 * @param isLead whether this is a lead (the table is empty)
 * @param attemptsLeft rejected attempts left in this turn before the referee acts for the seat
 * @param state the public state of the hand (table, card counts, trick, totals, ...)
 * @param budget the time left to answer, on the monotonic clock (docs/kits.md, section 2)
 * @param message the prompt as the referee sent it
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
    Budget budget,
    TurnPrompt message) {

  public Prompt {
    hand = List.copyOf(hand);
    legalPlays = List.copyOf(legalPlays);
  }

  /** The view of a prompt with the budget the library computed at its receipt. */
  public static Prompt from(TurnPrompt prompt, Budget budget) {
    Duration turnTime = Duration.ofMillis(Integer.toUnsignedLong(prompt.getTurnTimeMs()));
    Instant deadline =
        prompt.hasDeadline() ? Budget.toInstant(prompt.getDeadline()) : Instant.now().plus(turnTime);
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
        budget,
        prompt);
  }

  /**
   * The view of a prompt received now, with the default safety margin and the time bank
   * (tests and tools; the runner computes the budget itself).
   */
  public static Prompt from(TurnPrompt prompt) {
    return from(
        prompt,
        Budget.forPrompt(prompt, System.nanoTime(), Instant.now(), Options.DEFAULT_SAFETY_MARGIN, true));
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

  /** Whether a revolution is in force (rank comparisons inverted). */
  public boolean revolution() {
    return state.getRevolution();
  }

  @Override
  public String toString() {
    return "Prompt[turn "
        + turnId
        + ", hand "
        + String.join(" ", hand)
        + ", "
        + legalPlays.size()
        + " legal plays, canPass "
        + canPass
        + ", "
        + budget
        + "]";
  }
}
