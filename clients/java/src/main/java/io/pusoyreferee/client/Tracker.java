package io.pusoyreferee.client;

import io.pusoyreferee.referee.v1.Event;
import io.pusoyreferee.referee.v1.HandDealt;
import io.pusoyreferee.referee.v1.HandEnded;
import io.pusoyreferee.referee.v1.Passed;
import io.pusoyreferee.referee.v1.Played;
import io.pusoyreferee.referee.v1.PublicState;
import io.pusoyreferee.referee.v1.SeatCards;
import io.pusoyreferee.referee.v1.Snapshot;
import io.pusoyreferee.referee.v1.TrickPlay;
import io.pusoyreferee.referee.v1.TurnPrompt;
import io.pusoyreferee.referee.v1.Welcome;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;

/**
 * A seat's view of the match, kept from the welcome, the snapshot and the events: cards left
 * per seat, the cards played this hand, the trick, the play to beat and who made it, who is
 * locked out, the revolution, totals. Feed it from the hooks ({@link TrackingBot} does) and
 * read it in {@code choose}. It starts again from every snapshot, so it is right after a
 * reconnect too; with batched events it is fed the same events, from the prompts and the
 * batches. Checked against the referee's own {@code PublicState} in {@code
 * clients/conformance/tracker_streams.jsonl}.
 *
 * <p>Not thread-safe: the library calls the hooks and {@code choose} on one thread.
 */
public final class Tracker {

  /** One action of the current trick: the cards played, empty for a pass. */
  public record TrickEntry(int seat, List<String> cards) {
    public TrickEntry {
      cards = List.copyOf(cards);
    }

    public boolean isPass() {
      return cards.isEmpty();
    }

    @Override
    public String toString() {
      return seat + ":" + (isPass() ? "pass" : String.join(" ", cards));
    }
  }

  private int seat = -1;
  private Rules rules = Rules.DEFAULT;
  private boolean passLocksOut;
  private int handNumber;
  private List<String> hand = new ArrayList<>();
  private int[] cardCounts = new int[4];
  private List<String> playedCards = new ArrayList<>();
  private List<TrickEntry> trick = new ArrayList<>();
  private List<String> table = new ArrayList<>();
  private int tableSeat = -1;
  private boolean[] lockedOut = new boolean[4];
  private boolean revolution;
  private int[] totals = new int[4];
  private int[] handsWon = new int[4];

  /** Takes the seat and the rules. */
  public void onWelcome(Welcome welcome) {
    seat = welcome.getSeat();
    rules = Rules.from(welcome.getConfig().getRules());
    passLocksOut = welcome.getConfig().getRules().getPassLocksOut();
  }

  /** Starts again from the seat's view. */
  public void onSnapshot(Snapshot snapshot) {
    PublicState st = snapshot.getState();
    handNumber = st.getHandNumber();
    hand = new ArrayList<>(snapshot.getHandList());
    cardCounts = ints(st.getCardCountsList());
    playedCards = new ArrayList<>(st.getPlayedCardsList());
    trick = new ArrayList<>();
    for (TrickPlay t : st.getTrickList()) {
      trick.add(new TrickEntry(t.getSeat(), t.getPass() ? List.of() : t.getPlay().getCardsList()));
    }
    table = new ArrayList<>(st.getTable().getCardsList());
    tableSeat = st.hasTableSeat() ? st.getTableSeat() : -1;
    lockedOut = new boolean[4];
    for (int i = 0; i < Math.min(4, st.getLockedOutCount()); i++) {
      lockedOut[i] = st.getLockedOut(i);
    }
    revolution = st.getRevolution();
    totals = ints(st.getTotalsList());
    handsWon = ints(st.getHandsWonList());
  }

  /** Keeps the view up to date. */
  public void onEvent(Event event) {
    switch (event.getKindCase()) {
      case HAND_DEALT -> {
        HandDealt d = event.getHandDealt();
        handNumber = d.getHandNumber();
        cardCounts = new int[4];
        for (SeatCards h : d.getHandsList()) {
          if (h.getSeat() < 4) {
            cardCounts[h.getSeat()] = h.getCount();
          }
          if (h.getSeat() == seat) {
            hand = new ArrayList<>(h.getCardsList());
          }
        }
        playedCards = new ArrayList<>();
        trick = new ArrayList<>();
        table = new ArrayList<>();
        tableSeat = -1;
        revolution = false;
        lockedOut = new boolean[4];
      }
      case PLAYED -> {
        Played p = event.getPlayed();
        List<String> cards = p.getPlay().getCardsList();
        int who = p.getSeat();
        if (who < 4) {
          cardCounts[who] = p.getCardsLeft();
        }
        List<String> played = new ArrayList<>(playedCards);
        played.addAll(cards);
        playedCards = rules.sorted(played, false);
        trick.add(new TrickEntry(who, cards));
        table = new ArrayList<>(cards);
        tableSeat = who;
        revolution = p.getRevolution();
        if (who == seat) {
          Set<String> gone = new HashSet<>(cards);
          hand.removeIf(gone::contains);
        }
      }
      case PASSED -> {
        Passed p = event.getPassed();
        trick.add(new TrickEntry(p.getSeat(), List.of()));
        if (passLocksOut && !p.getForcedLeadPass() && p.getSeat() < 4) {
          lockedOut[p.getSeat()] = true;
        }
      }
      case TRICK_CLEARED -> {
        trick = new ArrayList<>();
        table = new ArrayList<>();
        tableSeat = -1;
        lockedOut = new boolean[4];
      }
      case HAND_ENDED -> {
        HandEnded h = event.getHandEnded();
        totals = ints(h.getTotalsList());
        if (h.getWinner() < 4) {
          handsWon[h.getWinner()]++;
        }
      }
      default -> {
        // Connections, rejections and the match's end change nothing tracked here.
      }
    }
  }

  /** This bot's seat, -1 before the welcome. */
  /**
   * What this tracker holds that differs from the referee's state in {@code p} (its public
   * state and the seat's hand), or null when they agree: a check of the tracker, used by the
   * conformance bot and the kit's tests.
   */
  public String differsFrom(TurnPrompt p) {
    Tracker t = this;
    PublicState st = p.getState();
    List<Tracker.TrickEntry> trick = new ArrayList<>();
    for (TrickPlay x : st.getTrickList()) {
      trick.add(new Tracker.TrickEntry(x.getSeat(), x.getPass() ? List.of() : x.getPlay().getCardsList()));
    }
    List<Boolean> locked = new ArrayList<>(st.getLockedOutList());
    while (locked.size() < 4) {
      locked.add(false);
    }
    Map<String, List<Object>> pairs = new LinkedHashMap<>();
    pairs.put("hand_number", List.of(t.handNumber(), st.getHandNumber()));
    pairs.put("hand", List.of(t.hand(), p.getHandList()));
    pairs.put("card_counts", List.of(t.cardCounts(), st.getCardCountsList()));
    pairs.put("played_cards", List.of(t.playedCards(), st.getPlayedCardsList()));
    pairs.put("table", List.of(t.table(), st.getTable().getCardsList()));
    pairs.put(
        "table_seat",
        List.of(t.tableSeat(), st.hasTableSeat() ? OptionalInt.of(st.getTableSeat()) : OptionalInt.empty()));
    pairs.put("locked_out", List.of(t.lockedOut(), locked));
    pairs.put("revolution", List.of(t.revolution(), st.getRevolution()));
    pairs.put("trick", List.of(t.trick(), trick));
    pairs.put("totals", List.of(t.totals(), st.getTotalsList()));
    pairs.put("hands_won", List.of(t.handsWon(), st.getHandsWonList()));
    for (Map.Entry<String, List<Object>> e : pairs.entrySet()) {
      if (!e.getValue().get(0).equals(e.getValue().get(1))) {
        return "turn " + p.getTurnId() + ": tracker " + e.getKey() + " " + e.getValue().get(0)
            + ", the referee's " + e.getValue().get(1);
      }
    }
    return null;
  }

  public int seat() {
    return seat;
  }

  /** The rules in force. */
  public Rules rules() {
    return rules;
  }

  /** Whether a pass locks a seat out of the trick. */
  public boolean passLocksOut() {
    return passLocksOut;
  }

  /** The hand being played (from 1; 0 before the first deal). */
  public int handNumber() {
    return handNumber;
  }

  /** This bot's cards. */
  public List<String> hand() {
    return List.copyOf(hand);
  }

  /** Cards left per seat. */
  public List<Integer> cardCounts() {
    return Arrays.stream(cardCounts).boxed().toList();
  }

  /** How many cards {@code seat} holds. */
  public int cardsLeft(int seat) {
    return cardCounts[seat];
  }

  /** Every card played this hand, in canonical order. */
  public List<String> playedCards() {
    return List.copyOf(playedCards);
  }

  /** The current trick, oldest first. */
  public List<TrickEntry> trick() {
    return List.copyOf(trick);
  }

  /** The play to beat; empty on a lead. */
  public List<String> table() {
    return List.copyOf(table);
  }

  /** Who made the play to beat. */
  public OptionalInt tableSeat() {
    return tableSeat < 0 ? OptionalInt.empty() : OptionalInt.of(tableSeat);
  }

  /** Per seat: passed and locked out of this trick. */
  public List<Boolean> lockedOut() {
    List<Boolean> out = new ArrayList<>(4);
    for (boolean b : lockedOut) {
      out.add(b);
    }
    return out;
  }

  /** Whether a revolution is in force. */
  public boolean revolution() {
    return revolution;
  }

  /** Match totals before this hand, per seat. */
  public List<Integer> totals() {
    return Arrays.stream(totals).boxed().toList();
  }

  /** Hands won per seat. */
  public List<Integer> handsWon() {
    return Arrays.stream(handsWon).boxed().toList();
  }

  /** Cards neither in this bot's hand nor played this hand: the others hold them. */
  public List<String> unseen() {
    Set<String> known = new HashSet<>(hand);
    known.addAll(playedCards);
    List<String> out = new ArrayList<>();
    for (String card : Deck.CARDS) {
      if (!known.contains(card)) {
        out.add(card);
      }
    }
    return rules.sorted(out, false);
  }

  private static int[] ints(List<Integer> values) {
    int[] out = new int[Math.max(4, values.size())];
    for (int i = 0; i < values.size(); i++) {
      out[i] = values.get(i);
    }
    return out;
  }
}
