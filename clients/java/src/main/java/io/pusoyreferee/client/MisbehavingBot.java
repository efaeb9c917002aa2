package io.pusoyreferee.client;

import io.pusoyreferee.referee.v1.Event;
import io.pusoyreferee.referee.v1.Snapshot;
import io.pusoyreferee.referee.v1.Welcome;

/**
 * Wraps a bot so that its first answer in each hand is illegal on purpose: one card that is
 * not in its hand. The referee rejects it and the runner recovers through
 * {@link Bot#onRejected}, which shows that a bot survives its own mistakes. Every other
 * answer is the wrapped bot's.
 */
public final class MisbehavingBot implements Bot {

  private final Bot inner;
  private int lastMisbehavedHand = -1;

  public MisbehavingBot(Bot inner) {
    this.inner = inner;
  }

  /** The deliberate mistake for this prompt: a single card the seat does not hold. */
  public static Choice illegalChoice(Prompt prompt) {
    return Choice.play(Deck.firstCardNotIn(prompt.hand()));
  }

  @Override
  public Choice choose(Prompt prompt) {
    if (prompt.handNumber() != lastMisbehavedHand) {
      lastMisbehavedHand = prompt.handNumber();
      return illegalChoice(prompt);
    }
    return inner.choose(prompt);
  }

  @Override
  public String name() {
    return inner.name() + "-misbehaving";
  }

  @Override
  public boolean wantLegalPlays() {
    return inner.wantLegalPlays();
  }

  @Override
  public boolean useTimeBank() {
    return inner.useTimeBank();
  }

  @Override
  public Choice onRejected(Prompt prompt, Rejection rejection) {
    return inner.onRejected(prompt, rejection);
  }

  @Override
  public void onWelcome(Welcome welcome) {
    inner.onWelcome(welcome);
  }

  @Override
  public void onSnapshot(Snapshot snapshot) {
    inner.onSnapshot(snapshot);
  }

  @Override
  public void onEvent(Event event) {
    inner.onEvent(event);
  }
}
