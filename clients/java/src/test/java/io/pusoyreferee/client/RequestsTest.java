package io.pusoyreferee.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import io.pusoyreferee.referee.v1.Action;
import io.pusoyreferee.referee.v1.Hello;
import io.pusoyreferee.referee.v1.PlayRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestsTest {

  @Test
  void helloCarriesVersionTokenAndName() {
    PlayRequest request = Requests.hello("secret", "my-bot", true, false);
    assertEquals(PlayRequest.KindCase.HELLO, request.getKindCase());
    Hello hello = request.getHello();
    assertEquals(1, hello.getProtocolVersion());
    assertEquals("secret", hello.getToken());
    assertEquals("my-bot", hello.getBotName());
    assertTrue(hello.getWantLegalPlays());
    assertTrue(!hello.getBatchEvents());
    assertTrue(Requests.hello("secret", "my-bot", false, true).getHello().getBatchEvents());
  }

  @Test
  void buildsAPlayAction() throws InvalidProtocolBufferException {
    PlayRequest request = Requests.action(17, Choice.play("9D", "9S"));
    PlayRequest decoded = PlayRequest.parseFrom(request.toByteArray());
    assertEquals(PlayRequest.KindCase.ACTION, decoded.getKindCase());
    Action action = decoded.getAction();
    assertEquals(17, action.getTurnId());
    assertEquals(Action.KindCase.PLAY, action.getKindCase());
    assertEquals(List.of("9D", "9S"), action.getPlay().getCardsList());
    assertFalse(action.hasPass());
  }

  @Test
  void buildsAPassAction() throws InvalidProtocolBufferException {
    PlayRequest request = Requests.action(18, Choice.pass());
    Action action = PlayRequest.parseFrom(request.toByteArray()).getAction();
    assertEquals(18, action.getTurnId());
    assertEquals(Action.KindCase.PASS, action.getKindCase());
    assertTrue(action.hasPass());
    assertFalse(action.hasPlay());
    assertEquals(request, Requests.pass(18));
  }

  @Test
  void aChoiceWithoutCardsIsAPass() {
    assertTrue(Choice.play(List.of()).isPass());
    assertTrue(Choice.play().isPass());
    assertEquals(Action.KindCase.PASS, Requests.action(3, Choice.play(List.of())).getAction().getKindCase());
    assertEquals("pass", Choice.pass().toString());
    assertEquals("4C 4S", Choice.play("4C", "4S").toString());
  }

  @Test
  void turnIdsAreUnsigned64Bit() {
    long big = Long.MAX_VALUE;
    assertEquals(big, Requests.pass(big).getAction().getTurnId());
  }
}
