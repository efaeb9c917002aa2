package io.pusoyreferee.sample;

import io.pusoyreferee.client.Bot;
import io.pusoyreferee.client.CardPlay;
import io.pusoyreferee.client.Choice;
import io.pusoyreferee.client.Prompt;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The sample bot: a uniformly random legal play, pass included when allowed.
 *
 * <p>WRITE YOUR BOT HERE: replace the body of {@link #choose}. The prompt has your hand,
 * every legal play (weakest first), whether you may pass, the table and the public state.
 * Override {@code onEvent}, {@code onRejected} or {@code fallback} from {@link Bot} if useful.
 */
public final class SampleBot implements Bot {

  private final Random random;

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
    List<Choice> options = new ArrayList<>();
    for (CardPlay play : prompt.legalPlays()) {
      options.add(Choice.play(play));
    }
    if (prompt.canPass()) {
      options.add(Choice.pass());
    }
    if (options.isEmpty()) {
      return prompt.fallback();
    }
    return options.get(random.nextInt(options.size()));
  }
}
