package io.pusoyreferee.client;

import com.google.protobuf.Timestamp;
import io.pusoyreferee.referee.v1.ActionResult;
import io.pusoyreferee.referee.v1.Combination;
import io.pusoyreferee.referee.v1.Event;
import io.pusoyreferee.referee.v1.MatchEnded;
import io.pusoyreferee.referee.v1.MatchStatus;
import io.pusoyreferee.referee.v1.Passed;
import io.pusoyreferee.referee.v1.Play;
import io.pusoyreferee.referee.v1.PlayResponse;
import io.pusoyreferee.referee.v1.Played;
import io.pusoyreferee.referee.v1.PublicState;
import io.pusoyreferee.referee.v1.Refusal;
import io.pusoyreferee.referee.v1.RefusalReason;
import io.pusoyreferee.referee.v1.RejectionReason;
import io.pusoyreferee.referee.v1.Snapshot;
import io.pusoyreferee.referee.v1.Standing;
import io.pusoyreferee.referee.v1.TrickCleared;
import io.pusoyreferee.referee.v1.TurnPrompt;
import io.pusoyreferee.referee.v1.Welcome;
import java.time.Instant;
import java.util.List;

/** Referee messages for tests. */
final class Messages {

  static final List<String> HAND = List.of("3D", "4C", "4S", "7H", "9D", "TC", "JS", "QH", "KD", "AC", "AS", "2C", "2H");

  private Messages() {}

  static Timestamp timestamp(Instant instant) {
    return Timestamp.newBuilder()
        .setSeconds(instant.getEpochSecond())
        .setNanos(instant.getNano())
        .build();
  }

  static Play play(Combination combination, String... cards) {
    return Play.newBuilder().addAllCards(List.of(cards)).setCombination(combination).build();
  }

  /** A prompt of hand 1 whose deadline is {@code deadline}. */
  static TurnPrompt.Builder prompt(long turnId, boolean canPass, Instant deadline) {
    return TurnPrompt.newBuilder()
        .setTurnId(turnId)
        .setSeat(2)
        .setDeadline(timestamp(deadline))
        .setTurnTimeMs(2000)
        .addAllHand(HAND)
        .addLegalPlays(play(Combination.COMBINATION_SINGLE, "3D"))
        .addLegalPlays(play(Combination.COMBINATION_PAIR, "4C", "4S"))
        .setCanPass(canPass)
        .setIsLead(!canPass)
        .setAttemptsLeft(3)
        .setState(
            PublicState.newBuilder()
                .setMatchId("m-1")
                .setHandNumber(1)
                .setTurn(2)
                .addAllCardCounts(List.of(13, 13, 13, 13)));
  }

  static PlayResponse promptMsg(long turnId, boolean canPass, Instant deadline) {
    return PlayResponse.newBuilder().setPrompt(prompt(turnId, canPass, deadline)).build();
  }

  static PlayResponse welcome(int seat, boolean reconnect) {
    return PlayResponse.newBuilder()
        .setWelcome(
            Welcome.newBuilder()
                .setSeat(seat)
                .setMatchId("m-1")
                .setProtocolVersion(1)
                .setReconnect(reconnect))
        .build();
  }

  static PlayResponse snapshot() {
    return PlayResponse.newBuilder()
        .setSnapshot(
            Snapshot.newBuilder()
                .setState(PublicState.newBuilder().setMatchId("m-1").setHandNumber(1))
                .addAllHand(HAND))
        .build();
  }

  static PlayResponse refusal(RefusalReason reason) {
    return PlayResponse.newBuilder()
        .setRefusal(Refusal.newBuilder().setReason(reason).setMessage("no").addSupportedVersions(1))
        .build();
  }

  static PlayResponse accepted(long turnId) {
    return PlayResponse.newBuilder()
        .setResult(ActionResult.newBuilder().setTurnId(turnId).setAccepted(true))
        .build();
  }

  static PlayResponse rejected(long turnId, RejectionReason reason, int attemptsLeft) {
    return PlayResponse.newBuilder()
        .setResult(
            ActionResult.newBuilder()
                .setTurnId(turnId)
                .setAccepted(false)
                .setReason(reason)
                .setMessage("rejected")
                .setAttemptsLeft(attemptsLeft))
        .build();
  }

  static PlayResponse played(long turnId, int seat, String... cards) {
    Combination kind =
        switch (cards.length) {
          case 1 -> Combination.COMBINATION_SINGLE;
          case 2 -> Combination.COMBINATION_PAIR;
          default -> Combination.COMBINATION_TRIPLE;
        };
    return PlayResponse.newBuilder()
        .setEvent(
            Event.newBuilder()
                .setPlayed(
                    Played.newBuilder()
                        .setTurnId(turnId)
                        .setSeat(seat)
                        .setPlay(play(kind, cards))
                        .setCardsLeft(13 - cards.length)))
        .build();
  }

  static PlayResponse passed(long turnId, int seat) {
    return PlayResponse.newBuilder()
        .setEvent(Event.newBuilder().setPassed(Passed.newBuilder().setTurnId(turnId).setSeat(seat)))
        .build();
  }

  static PlayResponse trickCleared(int leader) {
    return PlayResponse.newBuilder()
        .setEvent(Event.newBuilder().setTrickCleared(TrickCleared.newBuilder().setLeader(leader)))
        .build();
  }

  /** match_ended with seat 2 first. */
  static PlayResponse matchEnded() {
    MatchEnded ended =
        MatchEnded.newBuilder()
            .setStatus(MatchStatus.MATCH_STATUS_FINISHED)
            .addStandings(Standing.newBuilder().setPlace(1).addSeats(2).setTotal(0))
            .addStandings(Standing.newBuilder().setPlace(2).addSeats(0).setTotal(10))
            .addStandings(Standing.newBuilder().setPlace(3).addSeats(1).setTotal(12))
            .addStandings(Standing.newBuilder().setPlace(4).addSeats(3).setTotal(20))
            .setSeed("seed")
            .build();
    return PlayResponse.newBuilder().setEvent(Event.newBuilder().setMatchEnded(ended)).build();
  }
}
