package io.pusoyreferee.client;

import io.pusoyreferee.referee.v1.MatchEnded;
import io.pusoyreferee.referee.v1.MatchStatus;
import io.pusoyreferee.referee.v1.Standing;
import java.util.Optional;

/**
 * How the match ended for this bot.
 *
 * @param seat the bot's seat
 * @param matchId the match
 * @param ended the match_ended event; empty when the match ended while the bot was away
 */
public record Outcome(int seat, String matchId, Optional<MatchEnded> ended) {

  /** Whether the match was cancelled (by the organiser or a server shutdown). */
  public boolean cancelled() {
    return ended.map(e -> e.getStatus() == MatchStatus.MATCH_STATUS_CANCELLED).orElse(false);
  }

  /** One line for people: how the match ended and the seat's place. */
  public String summary() {
    String how;
    if (ended.isEmpty()) {
      how = "ended while the bot was away";
    } else if (cancelled()) {
      how = "was cancelled (" + ended.get().getCancelReason() + ")";
    } else {
      how = "is over";
    }
    return "match " + matchId + " " + how + "; seat " + seat + " placed " + place();
  }

  /** The seat's place (1 = first), or 0 when unknown. */
  public int place() {
    return ended.stream()
        .flatMap(e -> e.getStandingsList().stream())
        .filter(s -> s.getSeatsList().contains(seat))
        .mapToInt(Standing::getPlace)
        .findFirst()
        .orElse(0);
  }
}
