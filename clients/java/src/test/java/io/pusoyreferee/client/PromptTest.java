package io.pusoyreferee.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import io.pusoyreferee.referee.v1.Combination;
import io.pusoyreferee.referee.v1.PlayResponse;
import io.pusoyreferee.referee.v1.TurnPrompt;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class PromptTest {

  private static final Instant DEADLINE = Instant.parse("2026-01-02T03:04:05.600Z");
  private static final Duration MARGIN = Duration.ofMillis(50);

  @Test
  void parsesAPromptFromTheWire() throws InvalidProtocolBufferException {
    TurnPrompt.Builder builder = Messages.prompt(42, true, DEADLINE).setTimeBankMs(1500);
    builder
        .getStateBuilder()
        .setTable(Messages.play(Combination.COMBINATION_SINGLE, "9S"))
        .setTableSeat(1)
        .setMustInclude("");
    byte[] wire = PlayResponse.newBuilder().setPrompt(builder).build().toByteArray();

    Prompt prompt = Prompt.from(PlayResponse.parseFrom(wire).getPrompt());

    assertEquals(42, prompt.turnId());
    assertEquals(2, prompt.seat());
    assertEquals(DEADLINE, prompt.deadline());
    assertEquals(Duration.ofMillis(2000), prompt.turnTime());
    assertEquals(Duration.ofMillis(1500), prompt.timeBank());
    assertEquals(Messages.HAND, prompt.hand());
    assertEquals(
        List.of(
            new CardPlay(List.of("3D"), Combination.COMBINATION_SINGLE),
            new CardPlay(List.of("4C", "4S"), Combination.COMBINATION_PAIR)),
        prompt.legalPlays());
    assertTrue(prompt.canPass());
    assertFalse(prompt.isLead());
    assertEquals(3, prompt.attemptsLeft());
    assertEquals(1, prompt.handNumber());
    assertEquals(
        Optional.of(new CardPlay(List.of("9S"), Combination.COMBINATION_SINGLE)), prompt.table());
    assertEquals(OptionalInt.of(1), prompt.tableSeat());
    assertEquals(List.of(13, 13, 13, 13), prompt.cardCounts());
    assertEquals("m-1", prompt.state().getMatchId());
    assertEquals(42, prompt.message().getTurnId());
  }

  /** The budget's length from receipt, in ms, for a prompt read at {@code wall}. */
  private static long budgetMs(TurnPrompt wire, Instant wall, boolean useBank) {
    long receipt = System.nanoTime();
    Budget b = Budget.forPrompt(wire, receipt, wall, MARGIN, useBank);
    return Duration.ofNanos(b.endNanos() - receipt).toMillis();
  }

  @Test
  void theBudgetIsTheTurnPlusTheBankMinusTheMargin() {
    TurnPrompt wire = Messages.prompt(1, true, DEADLINE).setTimeBankMs(500).build();
    // Same clocks: the prompt arrives 10 ms after it was sent; the referee's deadline holds.
    assertEquals(1990 + 500 - 50, budgetMs(wire, DEADLINE.minusMillis(1990), true));
    assertEquals(1990 - 50, budgetMs(wire, DEADLINE.minusMillis(1990), false), "without the bank");
  }

  @Test
  void aClockBehindTheRefereesNeverStretchesTheTurnPastItsTime() {
    TurnPrompt wire = Messages.prompt(1, true, DEADLINE).setTimeBankMs(500).build();
    assertEquals(2000 + 500 - 50, budgetMs(wire, DEADLINE.minusSeconds(60), true));
  }

  @Test
  void aClockAheadOfTheRefereesLeavesOnlyTheBank() {
    TurnPrompt wire = Messages.prompt(1, true, DEADLINE).setTimeBankMs(500).build();
    assertEquals(500 - 50, budgetMs(wire, DEADLINE.plusSeconds(5), true));
  }

  @Test
  void withoutADeadlineTheTurnTimeOrTheDefaultCounts() {
    TurnPrompt noDeadline = Messages.prompt(1, true, DEADLINE).clearDeadline().build();
    assertEquals(2000 - 50, budgetMs(noDeadline, DEADLINE, true));
    TurnPrompt neither = Messages.prompt(1, true, DEADLINE).clearDeadline().setTurnTimeMs(0).build();
    assertEquals(5000 - 50, budgetMs(neither, DEADLINE, true));
  }

  @Test
  void theBudgetRunsOnTheMonotonicClock() throws InterruptedException {
    Budget budget = Budget.of(Duration.ofMillis(200));
    assertFalse(budget.expired());
    assertTrue(budget.remaining().toMillis() > 100);
    Thread.sleep(250);
    assertTrue(budget.expired());
    assertEquals(Duration.ZERO, budget.remaining());
  }

  @Test
  void aLeadHasNoTable() {
    Prompt prompt = Prompt.from(Messages.prompt(1, false, DEADLINE).build());
    assertTrue(prompt.isLead());
    assertEquals(Optional.empty(), prompt.table());
    assertEquals(OptionalInt.empty(), prompt.tableSeat());
  }

  @Test
  void theViewIsImmutable() {
    Prompt prompt = Prompt.from(Messages.prompt(1, true, DEADLINE).build());
    assertThrows(UnsupportedOperationException.class, () -> prompt.hand().add("3C"));
  }
}
