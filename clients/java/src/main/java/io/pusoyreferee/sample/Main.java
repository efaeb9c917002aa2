package io.pusoyreferee.sample;

import io.pusoyreferee.client.BotLauncher;

/** Runs {@link SampleBot}: {@code java -jar pusoy-bot.jar --address A --token T [--misbehave]}. */
public final class Main {

  private Main() {}

  public static void main(String[] args) {
    BotLauncher.main(args, SampleBot::new);
  }
}
