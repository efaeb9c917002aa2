package io.pusoyreferee.sample;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Timestamp;
import io.pusoyreferee.client.Choice;
import io.pusoyreferee.client.Prompt;
import io.pusoyreferee.referee.v1.Combination;
import io.pusoyreferee.referee.v1.Play;
import io.pusoyreferee.referee.v1.TurnPrompt;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SampleBotTest {

  private static Prompt prompt(boolean canPass) {
    return Prompt.from(
        TurnPrompt.newBuilder()
            .setTurnId(1)
            .setDeadline(Timestamp.newBuilder().setSeconds(Instant.now().getEpochSecond() + 5))
            .addAllHand(List.of("3C", "3S", "9H"))
            .addLegalPlays(Play.newBuilder().addCards("3C").setCombination(Combination.COMBINATION_SINGLE))
            .addLegalPlays(Play.newBuilder().addCards("3S").setCombination(Combination.COMBINATION_SINGLE))
            .addLegalPlays(
                Play.newBuilder().addCards("3C").addCards("3S").setCombination(Combination.COMBINATION_PAIR))
            .setCanPass(canPass)
            .build());
  }

  @Test
  void picksUniformlyAmongLegalPlaysAndThePass() {
    SampleBot bot = new SampleBot(new Random(7));
    Prompt prompt = prompt(true);
    Map<Choice, Integer> counts = new HashMap<>();
    for (int i = 0; i < 4000; i++) {
      counts.merge(bot.choose(prompt), 1, Integer::sum);
    }
    assertEquals(4, counts.size(), counts.toString());
    assertTrue(counts.containsKey(Choice.pass()));
    counts.values().forEach(n -> assertTrue(n > 850 && n < 1150, counts.toString()));
  }

  @Test
  void neverPassesWhenItMustPlay() {
    SampleBot bot = new SampleBot(new Random(1));
    Prompt prompt = prompt(false);
    for (int i = 0; i < 500; i++) {
      Choice choice = bot.choose(prompt);
      assertFalse(choice.isPass());
      assertTrue(prompt.legalPlays().stream().anyMatch(p -> p.cards().equals(choice.cards())));
    }
  }
}
