package io.pusoyreferee.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pusoyreferee.referee.v1.RejectionReason;
import io.pusoyreferee.referee.v1.TurnPrompt;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class MisbehavingBotTest {

  private static final Instant DEADLINE = Instant.now().plusSeconds(5);

  private static Prompt prompt(long turnId, int handNumber) {
    TurnPrompt.Builder builder = Messages.prompt(turnId, true, DEADLINE);
    builder.getStateBuilder().setHandNumber(handNumber);
    return Prompt.from(builder.build());
  }

  @Test
  void theIllegalChoiceIsOneCardNotInTheHand() {
    Prompt prompt = prompt(1, 1);
    Choice choice = MisbehavingBot.illegalChoice(prompt);
    assertEquals(1, choice.cards().size());
    assertFalse(prompt.hand().contains(choice.cards().get(0)));
    assertTrue(Deck.CARDS.contains(choice.cards().get(0)));
    // The hand holds 3D but not 3C, the first card of the deck.
    assertEquals(Choice.play("3C"), choice);
  }

  @Test
  void misbehavesOnTheFirstAnswerOfEachHandOnly() {
    Bot inner = p -> Choice.play("AC");
    MisbehavingBot bot = new MisbehavingBot(inner);

    assertEquals(Choice.play("3C"), bot.choose(prompt(1, 1)));
    assertEquals(Choice.play("AC"), bot.choose(prompt(5, 1)));
    assertEquals(Choice.play("AC"), bot.choose(prompt(9, 1)));
    assertEquals(Choice.play("3C"), bot.choose(prompt(40, 2)));
    assertEquals(Choice.play("AC"), bot.choose(prompt(44, 2)));
  }

  @Test
  void recoversThroughTheWrappedBotsHook() {
    MisbehavingBot bot = new MisbehavingBot(p -> Choice.play("AC"));
    Prompt prompt = prompt(1, 1);
    assertTrue(bot.onRejected(prompt, new Rejection(1, RejectionReason.REJECTION_REASON_CARD_NOT_IN_HAND, "", 2)).isPass());
    assertEquals("java-bot-misbehaving", bot.name());
  }

  @Test
  void firstCardNotInIgnoresCase() {
    assertEquals("3S", Deck.firstCardNotIn(java.util.List.of("3c")));
    assertEquals(52, Deck.CARDS.size());
  }
}
