package io.pusoyreferee.sample;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Timestamp;
import io.pusoyreferee.client.Choice;
import io.pusoyreferee.client.Prompt;
import io.pusoyreferee.referee.v1.Combination;
import io.pusoyreferee.referee.v1.Play;
import io.pusoyreferee.referee.v1.PublicState;
import io.pusoyreferee.referee.v1.Snapshot;
import io.pusoyreferee.referee.v1.TurnPrompt;
import io.pusoyreferee.referee.v1.Welcome;
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
  void playsItsStrongestWhenAnOpponentIsAboutToGoOut() {
    SampleBot bot = new SampleBot(new Random(3));
    bot.onWelcome(Welcome.newBuilder().setSeat(0).build());
    bot.onSnapshot(
        Snapshot.newBuilder()
            .setState(PublicState.newBuilder().setHandNumber(1).addAllCardCounts(List.of(3, 13, 1, 13)))
            .build());
    for (int i = 0; i < 50; i++) {
      assertEquals(Choice.play("3C", "3S"), bot.choose(prompt(true)), "the pair: the most cards");
    }
  }

  @Test
  void withNoLegalPlayItPasses() {
    SampleBot bot = new SampleBot(new Random(3));
    Prompt prompt =
        Prompt.from(TurnPrompt.newBuilder().setTurnId(2).setTurnTimeMs(1000).addHand("3C").setCanPass(true).build());
    assertTrue(bot.choose(prompt).isPass());
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
