package io.pusoyreferee.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

  @Test
  void parsesAPromptFromTheWire() throws InvalidProtocolBufferException {
    TurnPrompt.Builder builder = Messages.prompt(42, true, DEADLINE).setTimeBankMs(1500);
    builder
        .getStateBuilder()
        .setTable(Messages.play(Combination.COMBINATION_SINGLE, "9S"))
        .setTableSeat(1)
        .setMustInclude("");
    byte[] wire = PlayResponse.newBuilder().setPrompt(builder).build().toByteArray();

    Instant received = DEADLINE.minusMillis(1990);
    Prompt prompt = Prompt.from(PlayResponse.parseFrom(wire).getPrompt(), received);

    assertEquals(42, prompt.turnId());
    assertEquals(2, prompt.seat());
    assertEquals(DEADLINE, prompt.deadline());
    assertEquals(Duration.ofMillis(2000), prompt.turnTime());
    assertEquals(Duration.ofMillis(1500), prompt.timeBank());
    assertEquals(DEADLINE.plusMillis(1500), prompt.latestAnswer());
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
    assertEquals(received, prompt.receivedAt());
  }

  @Test
  void theLatestAnswerNeverTrustsASlowClockPastTheTurnTime() {
    TurnPrompt wire = Messages.prompt(1, true, DEADLINE).setTimeBankMs(500).build();
    // Same clocks: the prompt arrives 10 ms after it was sent; the referee's deadline holds.
    Prompt inTime = Prompt.from(wire, DEADLINE.minusMillis(1990));
    assertEquals(DEADLINE.plusMillis(500), inTime.latestAnswer());
    // This machine's clock is 5 s behind: receipt + turn time is the earlier bound.
    Instant behind = DEADLINE.minusSeconds(7);
    Prompt skewed = Prompt.from(wire, behind);
    assertEquals(behind.plusMillis(2000 + 500), skewed.latestAnswer());
  }

  @Test
  void aLeadHasNoTable() {
    Prompt prompt = Prompt.from(Messages.prompt(1, false, DEADLINE).build());
    assertTrue(prompt.isLead());
    assertEquals(Optional.empty(), prompt.table());
    assertEquals(OptionalInt.empty(), prompt.tableSeat());
  }

  @Test
  void withoutADeadlineTheTurnTimeCountsFromReceipt() {
    Instant received = Instant.parse("2026-05-06T07:08:09Z");
    Prompt prompt = Prompt.from(Messages.prompt(1, true, DEADLINE).clearDeadline().build(), received);
    assertEquals(received.plusMillis(2000), prompt.deadline());
  }

  @Test
  void theViewIsImmutable() {
    Prompt prompt = Prompt.from(Messages.prompt(1, true, DEADLINE).build());
    org.junit.jupiter.api.Assertions.assertThrows(
        UnsupportedOperationException.class, () -> prompt.hand().add("3C"));
  }
}
