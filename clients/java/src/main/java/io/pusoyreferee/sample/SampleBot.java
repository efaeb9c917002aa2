package io.pusoyreferee.sample;

import io.pusoyreferee.client.CardPlay;
import io.pusoyreferee.client.Choice;
import io.pusoyreferee.client.Fallback;
import io.pusoyreferee.client.Prompt;
import io.pusoyreferee.client.Rules;
import io.pusoyreferee.client.Tracker;
import io.pusoyreferee.client.TrackingBot;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The sample bot: a random legal play, pass included when allowed, except when an opponent
 * is about to go out: then its strongest legal play (by the tracker and the comparator).
 *
 * <p>WRITE YOUR BOT HERE: replace the body of {@link #choose}. The prompt has your hand,
 * every legal play (weakest first; none: a pass is the only legal action), whether you may
 * pass, the table and the public state, and {@code prompt.budget()}, the time left. {@link
 * #tracker()} follows the match from the events.
 */
public final class SampleBot extends TrackingBot {

  private final Random random; // used only on the bot's worker thread: no lock needed

  public SampleBot() {
    this(new Random());
  }

  public SampleBot(Random random) {
    this.random = random;
  }

  @Override
  public String name() {
    return "java-sample";
  }

  @Override
  public Choice choose(Prompt prompt) {
    if (prompt.legalPlays().isEmpty()) {
      return Fallback.of(prompt); // a pass: the only legal action
    }
    Tracker t = tracker();
    for (int seat = 0; seat < 4; seat++) {
      if (seat != prompt.seat() && t.cardsLeft(seat) == 1) {
        return strongest(t.rules(), t.revolution(), prompt.legalPlays());
      }
    }
    List<Choice> options = new ArrayList<>();
    for (CardPlay play : prompt.legalPlays()) {
      options.add(Choice.play(play));
    }
    if (prompt.canPass()) {
      options.add(Choice.pass());
    }
    return options.get(random.nextInt(options.size()));
  }

  /** The legal play with the most cards, then the highest key under the rules. */
  static Choice strongest(Rules rules, boolean revolution, List<CardPlay> plays) {
    CardPlay best = plays.get(0);
    long bestScore = -1;
    for (CardPlay play : plays) {
      long score = ((long) play.size() << 32) + rules.classify(play.cards(), revolution).map(Rules.Combo::key).orElse(0);
      if (score > bestScore) {
        best = play;
        bestScore = score;
      }
    }
    return Choice.play(best);
  }
}
