package io.pusoyreferee.client;

import io.pusoyreferee.referee.v1.Event;
import io.pusoyreferee.referee.v1.Snapshot;
import io.pusoyreferee.referee.v1.Welcome;

/**
 * A {@link Bot} whose {@link #tracker()} follows the match: the hooks feed it, live or
 * batched. Extend it and write {@code choose}; call {@code super} if you override a hook.
 */
public abstract class TrackingBot implements Bot {

  private final Tracker tracker = new Tracker();

  /** The bot's view of the match (cards left, played cards, the trick, the table, ...). */
  public Tracker tracker() {
    return tracker;
  }

  @Override
  public void onWelcome(Welcome welcome) {
    tracker.onWelcome(welcome);
  }

  @Override
  public void onSnapshot(Snapshot snapshot) {
    tracker.onSnapshot(snapshot);
  }

  @Override
  public void onEvent(Event event) {
    tracker.onEvent(event);
  }
}
