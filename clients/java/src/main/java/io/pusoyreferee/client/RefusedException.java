package io.pusoyreferee.client;

import io.pusoyreferee.referee.v1.Refusal;
import io.pusoyreferee.referee.v1.RefusalReason;

/** The referee refused the seat (bad token, version, match over, seat taken past the window). */
public final class RefusedException extends Exception {

  private static final long serialVersionUID = 1L;

  private final transient Refusal refusal;

  public RefusedException(Refusal refusal) {
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
