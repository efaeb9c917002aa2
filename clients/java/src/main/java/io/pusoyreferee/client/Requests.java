package io.pusoyreferee.client;

import io.pusoyreferee.referee.v1.Action;
import io.pusoyreferee.referee.v1.Cards;
import io.pusoyreferee.referee.v1.Hello;
import io.pusoyreferee.referee.v1.Pass;
import io.pusoyreferee.referee.v1.PlayRequest;
import java.util.List;

/** Builds the messages a bot sends on its Play stream. */
public final class Requests {

  /** The bot protocol version this library speaks. */
  public static final int PROTOCOL_VERSION = 1;

  private Requests() {}

  /** The opening Hello. */
  public static PlayRequest hello(
      String token, String botName, boolean wantLegalPlays, boolean batchEvents) {
    return PlayRequest.newBuilder()
        .setHello(
            Hello.newBuilder()
                .setProtocolVersion(PROTOCOL_VERSION)
                .setToken(token)
                .setWantLegalPlays(wantLegalPlays)
                .setBotName(botName)
                .setBatchEvents(batchEvents))
        .build();
  }

  /** The answer to turn {@code turnId}: a play, or a pass when the choice has no cards. */
  public static PlayRequest action(long turnId, Choice choice) {
    return choice.isPass() ? pass(turnId) : play(turnId, choice.cards());
  }

  /** Play {@code cards} on turn {@code turnId}. */
  public static PlayRequest play(long turnId, List<String> cards) {
    return PlayRequest.newBuilder()
        .setAction(
            Action.newBuilder()
                .setTurnId(turnId)
                .setPlay(Cards.newBuilder().addAllCards(cards)))
        .build();
  }

  /** Pass on turn {@code turnId}. */
  public static PlayRequest pass(long turnId) {
    return PlayRequest.newBuilder()
        .setAction(Action.newBuilder().setTurnId(turnId).setPass(Pass.getDefaultInstance()))
        .build();
  }
}
