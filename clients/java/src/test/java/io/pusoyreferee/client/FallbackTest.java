package io.pusoyreferee.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    assertTrue(Fallback.of(Prompt.from(Messages.prompt(1, true, DEADLINE).build())).isPass());
  }

  @Test
  void playsTheWeakestLegalPlayWhenItMustPlay() {
    assertEquals(Choice.play("3D"), Fallback.of(Prompt.from(Messages.prompt(1, false, DEADLINE).build())));
  }

  @Test
  void withoutLegalPlaysLeadsTheOpeningCardOrTheLowestCard() {
    Prompt lowest = Prompt.from(Messages.prompt(1, false, DEADLINE).clearLegalPlays().build());
    assertEquals(Choice.play("3D"), Fallback.of(lowest));
    var opening = Messages.prompt(1, false, DEADLINE).clearLegalPlays();
    opening.getStateBuilder().setMustInclude("3C");
    assertEquals(Choice.play("3C"), Fallback.of(Prompt.from(opening.build())));
    Prompt nothing = Prompt.from(Messages.prompt(1, false, DEADLINE).clearLegalPlays().clearHand().build());
    assertTrue(Fallback.of(nothing).isPass());
  }

  @Test
  void theRejectionHookSendsTheFallbackByDefault() {
    Rejection rejected = new Rejection(1, RejectionReason.REJECTION_REASON_CARD_NOT_IN_HAND, "no", 2);
    Prompt lead = Prompt.from(Messages.prompt(1, false, DEADLINE).build());
    assertEquals(Choice.play(List.of("3D")), PLAIN.onRejected(lead, rejected));
    Prompt follow = Prompt.from(Messages.prompt(2, true, DEADLINE).build());
    assertTrue(PLAIN.onRejected(follow, rejected).isPass());
  }
}
