package io.pusoyreferee.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pusoyreferee.referee.v1.ActionResult;
import io.pusoyreferee.referee.v1.RejectionReason;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class FallbackTest {

  private static final Instant DEADLINE = Instant.now().plusSeconds(5);

  /** A bot that only implements choose, so every hook is the interface's default. */
  private static final Bot PLAIN = prompt -> Choice.play("2H");

  @Test
  void passesWhenAPassIsLegal() {
    Prompt prompt = Prompt.from(Messages.prompt(1, true, DEADLINE).build());
    assertTrue(prompt.fallback().isPass());
    assertTrue(PLAIN.fallback(prompt).isPass());
  }

  @Test
  void playsTheWeakestLegalPlayWhenItMustPlay() {
    Prompt prompt = Prompt.from(Messages.prompt(1, false, DEADLINE).build());
    assertEquals(Choice.play("3D"), prompt.fallback());
    assertEquals(Choice.play("3D"), PLAIN.fallback(prompt));
  }

  @Test
  void withoutLegalPlaysLeadsTheLowestCard() {
    Prompt prompt = Prompt.from(Messages.prompt(1, false, DEADLINE).clearLegalPlays().build());
    assertEquals(Choice.play("3D"), prompt.fallback());
  }

  @Test
  void theRejectionHookSendsTheFallbackByDefault() {
    Prompt lead = Prompt.from(Messages.prompt(1, false, DEADLINE).build());
    ActionResult rejected =
        ActionResult.newBuilder()
            .setTurnId(1)
            .setReason(RejectionReason.REJECTION_REASON_CARD_NOT_IN_HAND)
            .setAttemptsLeft(2)
            .build();
    assertEquals(Choice.play(List.of("3D")), PLAIN.onRejected(lead, rejected));
    Prompt follow = Prompt.from(Messages.prompt(2, true, DEADLINE).build());
    assertTrue(PLAIN.onRejected(follow, rejected).isPass());
  }
}
