package io.pusoyreferee.client;

import io.pusoyreferee.referee.v1.MatchEnded;
import io.pusoyreferee.referee.v1.Standing;
import java.util.Optional;

/**
 * How the match ended for this bot.
 *
 * @param seat the bot's seat
 * @param matchId the match
 * @param ended the match_ended event; empty when the match ended while the bot was away
 */
public record MatchOutcome(int seat, String matchId, Optional<MatchEnded> ended) {

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
