package io.pusoyreferee.client;

import io.pusoyreferee.referee.v1.Combination;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The options that decide what beats what, read from {@code Welcome.config.rules}, and the
 * comparator: {@link #classify} says what combination cards form, {@link #beats} whether a
 * play may answer the table. The same answers as the referee's engine (docs/rules.md),
 * checked against the reference judge's verdicts in {@code
 * clients/conformance/judge_cases.jsonl}.
 *
 * <pre>{@code
 * Rules rules = Rules.from(welcome.getConfig().getRules());
 * rules.classify(List.of("9S", "9D"), false);            // Optional[Combo[COMBINATION_PAIR ...]]
 * rules.beats(List.of("2S"), List.of("2H"), false);      // true in big-two
 * }</pre>
 *
 * @param suitOrder "clubs-low" (C &lt; S &lt; H &lt; D) or "diamonds-low" (D &lt; C &lt; H &lt; S)
 * @param straights "wrap-high", "wrap-low" or "none-with-two"
 * @param fiveCardCategories "ranked" (a higher category beats a lower) or "locked"
 * @param fiveCardHands whether five-card hands are played at all
 * @param lowestStraightBeatsStraights whether 3-4-5-6-7 beats every other straight
 * @param bomb whether a four of a kind beats any play but a higher bomb or a straight flush
 */
public record Rules(
    String suitOrder,
    String straights,
    String fiveCardCategories,
    boolean fiveCardHands,
    boolean lowestStraightBeatsStraights,
    boolean bomb) {

  /** pusoy-dos's rules. */
  public static final Rules DEFAULT = new Rules("clubs-low", "wrap-high", "ranked", true, false, false);

  static final String RANKS = "3456789TJQKA2";
  static final String SUITS = "CSHD";
  /** Five-card keys: category * SHIFT + the key within the category. */
  private static final int SHIFT = 1 << 20;

  /** A classified play: what it is, its cards, and its strength (larger is stronger). */
  public record Combo(Combination kind, List<String> cards, int key) {
    public Combo {
      cards = List.copyOf(cards);
    }
  }

  /** The rules of a {@code Welcome}'s configuration (pusoy-dos's for what is unset). */
  public static Rules from(io.pusoyreferee.referee.v1.Rules m) {
    return new Rules(
        m.getSuitOrder().isEmpty() ? DEFAULT.suitOrder : m.getSuitOrder(),
        m.getStraights().isEmpty() ? DEFAULT.straights : m.getStraights(),
        m.getFiveCardCategories().isEmpty() ? DEFAULT.fiveCardCategories : m.getFiveCardCategories(),
        m.getFiveCardHands(),
        m.getLowestStraightBeatsStraights(),
        m.getBomb());
  }

  /**
   * The rank (0..12, 3 to 2) and suit (0..3, C S H D) of a card such as "9S", "10h" or "2♠".
   *
   * @throws IllegalArgumentException not a card
   */
  public static int[] parseCard(String text) {
    String t =
        text.strip()
            .toUpperCase(Locale.ROOT)
            .replace("10", "T")
            .replace('♣', 'C')
            .replace('♠', 'S')
            .replace('♥', 'H')
            .replace('♦', 'D');
    if (t.length() != 2 || RANKS.indexOf(t.charAt(0)) < 0 || SUITS.indexOf(t.charAt(1)) < 0) {
      throw new IllegalArgumentException("not a card: \"" + text + "\"");
    }
    return new int[] {RANKS.indexOf(t.charAt(0)), SUITS.indexOf(t.charAt(1))};
  }

  /** Strength of suit (0..3, C S H D) under the suit order, 0 weakest. */
  private int suitRank(int suit) {
    return "diamonds-low".equals(suitOrder) ? new int[] {1, 3, 2, 0}[suit] : suit;
  }

  /** A card's strength under the rules (larger is stronger); -1 for text that is no card. */
  public int cardKey(String card, boolean revolution) {
    int[] rs;
    try {
      rs = parseCard(card);
    } catch (IllegalArgumentException e) {
      return -1;
    }
    int rank = revolution ? 12 - rs[0] : rs[0];
    return rank * 4 + suitRank(rs[1]);
  }

  /** The cards in ascending order under the rules (the referee's canonical order). */
  public List<String> sorted(Collection<String> cards, boolean revolution) {
    List<String> out = new ArrayList<>(cards);
    out.sort(Comparator.comparingInt(c -> cardKey(c, revolution)));
    return out;
  }

  /** A straight's ranks and the rank whose suit breaks ties between equal straights. */
  private record Sequence(int[] ranks, int tie) {}

  /** The straights the rules allow, weakest first. */
  private List<Sequence> sequences() {
    List<Sequence> normal = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      normal.add(new Sequence(new int[] {i, i + 1, i + 2, i + 3, i + 4}, i + 4));
    }
    int[] a2345 = {11, 12, 0, 1, 2};
    int[] t23456 = {12, 0, 1, 2, 3};
    List<Sequence> out = new ArrayList<>();
    switch (straights) {
      case "none-with-two" -> out.addAll(normal);
      case "wrap-high" -> {
        out.addAll(normal);
        out.add(new Sequence(a2345, 12));
        out.add(new Sequence(t23456, 12));
      }
      default -> { // wrap-low: the top of the sequence breaks ties
        out.add(new Sequence(a2345, 2));
        out.add(new Sequence(t23456, 3));
        out.addAll(normal);
      }
    }
    return out;
  }

  /**
   * The combination the cards form under these rules, or empty when they are no play (or not
   * cards).
   */
  public Optional<Combo> classify(List<String> cards, boolean revolution) {
    int n = cards.size();
    int[] ranks = new int[n];
    int[] suits = new int[n];
    Set<Integer> seen = new HashSet<>();
    Map<Integer, Integer> counts = new HashMap<>();
    Set<Integer> suitSet = new HashSet<>();
    for (int i = 0; i < n; i++) {
      int[] rs;
      try {
        rs = parseCard(cards.get(i));
      } catch (IllegalArgumentException e) {
        return Optional.empty();
      }
      if (!seen.add(rs[0] * 4 + rs[1])) {
        return Optional.empty();
      }
      ranks[i] = rs[0];
      suits[i] = rs[1];
      counts.merge(rs[0], 1, Integer::sum);
      suitSet.add(rs[1]);
    }
    if (n == 1) {
      return combo(Combination.COMBINATION_SINGLE, cards, eff(ranks[0], revolution) * 4 + suitRank(suits[0]));
    }
    if (n == 2 || n == 3) {
      if (counts.size() != 1) {
        return Optional.empty();
      }
      if (n == 3) {
        return combo(Combination.COMBINATION_TRIPLE, cards, eff(ranks[0], revolution));
      }
      int suit = Math.max(suitRank(suits[0]), suitRank(suits[1]));
      return combo(Combination.COMBINATION_PAIR, cards, eff(ranks[0], revolution) * 4 + suit);
    }
    if (n != 5 || !fiveCardHands) {
      return Optional.empty();
    }
    boolean flush = suitSet.size() == 1;
    if (counts.size() == 5) {
      List<Sequence> seqs = sequences();
      for (int i = 0; i < seqs.size(); i++) {
        Sequence seq = seqs.get(i);
        boolean match = true;
        for (int rank : seq.ranks) {
          if (!counts.containsKey(rank)) {
            match = false;
            break;
          }
        }
        if (!match) {
          continue;
        }
        int order = revolution ? seqs.size() - 1 - i : i;
        int flushOrder = order;
        if (lowestStraightBeatsStraights && seq.ranks[0] == 0 && seq.ranks[4] == 4) {
          order = seqs.size();
        }
        int tieSuit = 0;
        for (int j = 0; j < n; j++) {
          if (ranks[j] == seq.tie) {
            tieSuit = suits[j];
          }
        }
        if (flush) {
          return combo(
              Combination.COMBINATION_STRAIGHT_FLUSH, cards, 4 * SHIFT + flushOrder * 4 + suitRank(tieSuit));
        }
        return combo(Combination.COMBINATION_STRAIGHT, cards, order * 4 + suitRank(tieSuit));
      }
      if (flush) {
        int effRanks = 0;
        for (int rank : counts.keySet()) {
          effRanks |= 1 << eff(rank, revolution);
        }
        return combo(Combination.COMBINATION_FLUSH, cards, SHIFT + (suitRank(suits[0]) << 13) + effRanks);
      }
      return Optional.empty();
    }
    if (counts.size() == 2) {
      for (Map.Entry<Integer, Integer> e : counts.entrySet()) {
        if (e.getValue() == 3) {
          return combo(Combination.COMBINATION_FULL_HOUSE, cards, 2 * SHIFT + eff(e.getKey(), revolution));
        }
        if (e.getValue() == 4) {
          return combo(Combination.COMBINATION_FOUR_OF_A_KIND, cards, 3 * SHIFT + eff(e.getKey(), revolution));
        }
      }
    }
    return Optional.empty();
  }

  /**
   * Whether {@code play} may answer {@code table} under these rules: both must be plays; the
   * same number of cards (unless a bomb), the same category when categories are locked, and
   * stronger.
   */
  public boolean beats(List<String> play, List<String> table, boolean revolution) {
    Optional<Combo> p = classify(play, revolution);
    Optional<Combo> t = classify(table, revolution);
    if (p.isEmpty() || t.isEmpty()) {
      return false;
    }
    Combo pc = p.get();
    Combo tc = t.get();
    if (bomb && pc.kind() == Combination.COMBINATION_FOUR_OF_A_KIND) {
      if (tc.kind() == Combination.COMBINATION_STRAIGHT_FLUSH) {
        return false;
      }
      if (tc.kind() == Combination.COMBINATION_FOUR_OF_A_KIND) {
        return pc.key() > tc.key();
      }
      return true;
    }
    if (pc.cards().size() != tc.cards().size()) {
      return false;
    }
    if ("locked".equals(fiveCardCategories) && pc.kind() != tc.kind()) {
      return false;
    }
    return pc.key() > tc.key();
  }

  private static int eff(int rank, boolean revolution) {
    return revolution ? 12 - rank : rank;
  }

  private static Optional<Combo> combo(Combination kind, List<String> cards, int key) {
    return Optional.of(new Combo(kind, cards, key));
  }
}
