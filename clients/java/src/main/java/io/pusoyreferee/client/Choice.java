package io.pusoyreferee.client;

import java.util.Arrays;
import java.util.Collection;
import java.util.List;

/**
 * A bot's answer to a prompt: the cards to play, or a pass (no cards).
 *
 * <p>Cards are in the referee's text notation, such as {@code "3C"}, {@code "TD"} or
 * {@code "2S"} (rank 3-9 T J Q K A 2, suit C S H D; any case, "10" for "T").
 *
 * @param cards the cards to play; empty for a pass
 */
public record Choice(List<String> cards) {

  private static final Choice PASS = new Choice(List.of());

  public Choice {
    cards = List.copyOf(cards);
  }

  /** A pass. */
  public static Choice pass() {
    return PASS;
  }

  /** Play these cards ({@link #pass()} when there are none). */
  public static Choice play(String... cards) {
    return play(Arrays.asList(cards));
  }

  /** Play these cards ({@link #pass()} when there are none). */
  public static Choice play(Collection<String> cards) {
    return cards.isEmpty() ? PASS : new Choice(List.copyOf(cards));
  }

  /** Play one of the prompt's legal plays. */
  public static Choice play(CardPlay play) {
    return play(play.cards());
  }

  /** Whether this is a pass. */
  public boolean isPass() {
    return cards.isEmpty();
  }

  @Override
  public String toString() {
    return isPass() ? "pass" : String.join(" ", cards);
  }
}
