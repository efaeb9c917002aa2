package io.pusoyreferee.client;

import io.pusoyreferee.referee.v1.Refusal;
import io.pusoyreferee.referee.v1.RefusalReason;

/** The referee refused the seat (bad token, seat taken, version, match over, ...). */
public final class BotRefusedException extends Exception {

  private static final long serialVersionUID = 1L;

  private final transient Refusal refusal;

  public BotRefusedException(Refusal refusal) {
    super(refusal.getReason() + ": " + refusal.getMessage());
    this.refusal = refusal;
  }

  public Refusal refusal() {
    return refusal;
  }

  public RefusalReason reason() {
    return refusal.getReason();
  }
}
