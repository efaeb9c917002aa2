package io.pusoyreferee.client;

import io.pusoyreferee.referee.v1.Combination;
import io.pusoyreferee.referee.v1.Play;
import java.util.List;

/**
 * A play: its cards, in canonical order, and the combination they form.
 *
 * @param cards the cards, such as {@code ["9D", "9S"]}
 * @param combination what they form ({@code COMBINATION_PAIR}, ...)
 */
public record CardPlay(List<String> cards, Combination combination) {

  public CardPlay {
    cards = List.copyOf(cards);
  }

  /** The library's view of a protocol {@code Play}. */
  public static CardPlay from(Play play) {
    return new CardPlay(play.getCardsList(), play.getCombination());
  }

  /** How many cards the play has. */
  public int size() {
    return cards.size();
  }

  @Override
  public String toString() {
    return String.join(" ", cards) + " (" + combination + ")";
  }
}
