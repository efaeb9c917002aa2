package io.pusoyreferee.client;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** The 52 cards in the referee's text notation. */
public final class Deck {

  /** Ranks, lowest first. */
  public static final String RANKS = "3456789TJQKA2";

  /** Suits in clubs-low order (the profile's suit order may differ). */
  public static final String SUITS = "CSHD";

  /** Every card, "3C" to "2D", rank-major. */
  public static final List<String> CARDS = allCards();

  private Deck() {}

  /** The first card of {@link #CARDS} that is not among {@code cards} (compared ignoring case). */
  public static String firstCardNotIn(Collection<String> cards) {
    Set<String> held = new HashSet<>();
    for (String card : cards) {
      held.add(card.toUpperCase(Locale.ROOT));
    }
    for (String card : CARDS) {
      if (!held.contains(card)) {
        return card;
      }
    }
    throw new IllegalArgumentException("every card of the deck is held");
  }

  private static List<String> allCards() {
    List<String> cards = new ArrayList<>(52);
    for (char rank : RANKS.toCharArray()) {
      for (char suit : SUITS.toCharArray()) {
        cards.add("" + rank + suit);
      }
    }
    return List.copyOf(cards);
  }
}
