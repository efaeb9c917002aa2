package io.pusoyreferee.client;

import io.pusoyreferee.referee.v1.ActionResult;
import io.pusoyreferee.referee.v1.RejectionReason;

/**
 * The referee refused an answer (an {@code ActionResult} with {@code accepted} false).
 *
 * @param turnId the turn the refused action named
 * @param reason why ({@code REJECTION_REASON_DOES_NOT_BEAT}, ...)
 * @param message the referee's explanation
 * @param attemptsLeft rejected attempts left in this turn before the referee acts for the seat
 */
public record Rejection(long turnId, RejectionReason reason, String message, int attemptsLeft) {

  /** The library's view of a result message. */
  public static Rejection from(ActionResult result) {
    return new Rejection(
        result.getTurnId(), result.getReason(), result.getMessage(), result.getAttemptsLeft());
  }

  @Override
  public String toString() {
    return reason + " (" + message + "), " + attemptsLeft + " attempt(s) left";
  }
}
