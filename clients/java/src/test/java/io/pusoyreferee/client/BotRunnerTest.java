package io.pusoyreferee.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.pusoyreferee.referee.v1.Action;
import io.pusoyreferee.referee.v1.Event;
import io.pusoyreferee.referee.v1.EventBatch;
import io.pusoyreferee.referee.v1.PlayRequest;
import io.pusoyreferee.referee.v1.PlayResponse;
import io.pusoyreferee.referee.v1.RefusalReason;
import io.pusoyreferee.referee.v1.RejectionReason;
import io.pusoyreferee.referee.v1.TurnPrompt;
import io.pusoyreferee.referee.v1.Welcome;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class BotRunnerTest {

  /** A bot that records what it is told and answers with fixed cards. */
  private static final class RecordingBot implements Bot {
    final List<String> calls = new CopyOnWriteArrayList<>();
    final List<Rejection> rejections = new CopyOnWriteArrayList<>();
    final Choice answer;

    RecordingBot(Choice answer) {
      this.answer = answer;
    }

    @Override
    public Choice choose(Prompt prompt) {
      calls.add("choose " + prompt.turnId());
      return answer;
    }

    @Override
    public String name() {
      return "recorder";
    }

    @Override
    public Choice onRejected(Prompt prompt, Rejection rejection) {
      rejections.add(rejection);
      return Bot.super.onRejected(prompt, rejection);
    }

    @Override
    public void onWelcome(Welcome welcome) {
      calls.add("welcome " + welcome.getSeat());
    }

    @Override
    public void onEvent(Event event) {
      calls.add("event " + event.getKindCase());
    }
  }

  private static Instant inSeconds(int seconds) {
    return Instant.now().plusSeconds(seconds);
  }

  private static Options.Builder options() {
    return Options.builder().token("tok");
  }

  private static BotRunner runner(Bot bot, FakeReferee referee) {
    return runner(bot, referee, options());
  }

  private static BotRunner runner(Bot bot, FakeReferee referee, Options.Builder options) {
    return new BotRunner(bot, referee.channel, options.build()).log(line -> {});
  }

  private static List<Action> actions(FakeReferee referee) {
    return referee.allRequests().stream().filter(PlayRequest::hasAction).map(PlayRequest::getAction).toList();
  }

  @Test
  void playsAMatchToItsEnd() throws Exception {
    RecordingBot bot = new RecordingBot(Choice.play("4C", "4S"));
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (req.hasHello()) {
                conn.send(Messages.welcome(2, false), Messages.snapshot(), Messages.promptMsg(7, false, inSeconds(5)));
              } else {
                conn.send(Messages.accepted(7), Messages.matchEnded());
                conn.close();
              }
            })) {
      Outcome outcome = runner(bot, referee).play();

      assertEquals(2, outcome.seat());
      assertEquals("m-1", outcome.matchId());
      assertEquals(1, outcome.place());
      assertTrue(outcome.ended().isPresent());
      PlayRequest hello = referee.conns.get(0).received.get(0);
      assertEquals(1, hello.getHello().getProtocolVersion());
      assertEquals("tok", hello.getHello().getToken());
      assertEquals("recorder", hello.getHello().getBotName());
      assertTrue(hello.getHello().getWantLegalPlays());
      List<Action> actions = actions(referee);
      assertEquals(1, actions.size());
      assertEquals(7, actions.get(0).getTurnId());
      assertEquals(List.of("4C", "4S"), actions.get(0).getPlay().getCardsList());
      assertEquals(List.of("welcome 2", "choose 7", "event MATCH_ENDED"), bot.calls);
      assertEquals("match m-1 is over; seat 2 placed 1", outcome.summary());
      assertEquals(1, referee.conns.size());
    }
  }

  @Test
  void recoversFromARejectionThroughTheHook() throws Exception {
    RecordingBot bot = new RecordingBot(Choice.play("5H"));
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (req.hasHello()) {
                conn.send(Messages.welcome(2, false), Messages.promptMsg(3, true, inSeconds(5)));
              } else if (conn.actions() == 1) {
                conn.send(Messages.rejected(3, RejectionReason.REJECTION_REASON_CARD_NOT_IN_HAND, 2));
              } else {
                conn.send(Messages.accepted(3), Messages.matchEnded());
                conn.close();
              }
            })) {
      runner(bot, referee).play();

      List<Action> actions = actions(referee);
      assertEquals(2, actions.size());
      assertEquals(List.of("5H"), actions.get(0).getPlay().getCardsList());
      assertEquals(3, actions.get(1).getTurnId());
      assertTrue(actions.get(1).hasPass(), "the default hook sends the fallback: a pass");
      assertEquals(1, bot.rejections.size());
      assertEquals(RejectionReason.REJECTION_REASON_CARD_NOT_IN_HAND, bot.rejections.get(0).reason());
    }
  }

  @Test
  void doesNotRetryWhenNoAttemptIsLeftOrTheTurnIsAnother() throws Exception {
    RecordingBot bot = new RecordingBot(Choice.play("5H"));
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (req.hasHello()) {
                conn.send(Messages.welcome(2, false), Messages.promptMsg(3, true, inSeconds(5)));
              } else {
                conn.send(
                    Messages.rejected(3, RejectionReason.REJECTION_REASON_DOES_NOT_BEAT, 0),
                    Messages.rejected(1, RejectionReason.REJECTION_REASON_STALE_TURN, 2),
                    Messages.matchEnded());
                conn.close();
              }
            })) {
      runner(bot, referee).play();
      assertEquals(1, actions(referee).size());
      assertTrue(bot.rejections.isEmpty());
    }
  }

  @Test
  void sendsTheFallbackBeforeTheDeadlineWhenChooseRunsLate() throws Exception {
    Bot slow =
        prompt -> {
          try {
            Thread.sleep(10_000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return Choice.play("2H");
        };
    List<Instant> deadlines = new CopyOnWriteArrayList<>();
    List<Instant> arrivals = new CopyOnWriteArrayList<>();
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (req.hasHello()) {
                Instant deadline = Instant.now().plusMillis(1000);
                deadlines.add(deadline);
                conn.send(Messages.welcome(2, false), Messages.promptMsg(9, false, deadline));
              } else {
                arrivals.add(Instant.now());
                conn.send(Messages.accepted(9), Messages.matchEnded());
                conn.close();
              }
            })) {
      runner(slow, referee, options().safetyMargin(Duration.ofMillis(250))).play();

      Action action = actions(referee).get(0);
      assertEquals(List.of("3D"), action.getPlay().getCardsList(), "the weakest legal play");
      assertTrue(
          arrivals.get(0).isBefore(deadlines.get(0)),
          "answered before the deadline: " + Duration.between(deadlines.get(0), arrivals.get(0)));
    }
  }

  @Test
  void reconnectsAtOnceWhenTheStreamDropsWhileTheBotThinks() throws Exception {
    Bot slow =
        prompt -> {
          try {
            Thread.sleep(10_000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return Choice.pass();
        };
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (conn.index == 0) {
                conn.send(Messages.welcome(2, false), Messages.promptMsg(1, true, inSeconds(8)));
                conn.close(); // the drill: right after the prompt
              } else {
                conn.send(Messages.welcome(2, true), Messages.matchEnded());
                conn.close();
              }
            })) {
      long start = System.nanoTime();
      runner(slow, referee).play();
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertTrue(ms < 4000, "did not wait for the bot before reconnecting: " + ms + " ms");
      assertEquals(2, referee.conns.size());
      assertTrue(actions(referee).isEmpty(), "no answer sent on the dead stream");
    }
  }

  @Test
  void aPromptPastItsDeadlineGetsTheFallbackWithoutAskingTheBot() throws Exception {
    RecordingBot bot = new RecordingBot(Choice.play("2H"));
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (req.hasHello()) {
                conn.send(Messages.welcome(2, false), Messages.promptMsg(4, true, Instant.now().minusSeconds(1)));
              } else {
                conn.send(Messages.matchEnded());
                conn.close();
              }
            })) {
      runner(bot, referee).play();
      assertTrue(actions(referee).get(0).hasPass());
      assertFalse(bot.calls.contains("choose 4"));
    }
  }

  @Test
  void aChooseThatThrowsSendsTheFallback() throws Exception {
    Bot broken =
        prompt -> {
          throw new IllegalStateException("bug");
        };
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (req.hasHello()) {
                conn.send(Messages.welcome(2, false), Messages.promptMsg(4, true, inSeconds(5)));
              } else {
                conn.send(Messages.matchEnded());
                conn.close();
              }
            })) {
      List<String> marked = new CopyOnWriteArrayList<>();
      runner(broken, referee).raised(marked::add).play();
      assertTrue(actions(referee).get(0).hasPass());
      assertEquals(List.of("PUSOY_BOT_RAISED turn=4 call=choose error=IllegalStateException: bug"), marked);
    }
  }

  @Test
  void theRaisedMarkerIsOneBoundedLine() {
    String line = Raised.line(1, "choose", new RuntimeException("x\ny\r\tz\u2028" + "w".repeat(500)));
    assertTrue(line.startsWith("PUSOY_BOT_RAISED turn=1 call=choose error=RuntimeException: x y  z "), line);
    assertTrue(line.chars().noneMatch(c -> c == '\n' || c == '\r' || c == '\t' || c == 0x2028), line);
    assertEquals(Raised.MAX_CHARS, line.split(" error=", 2)[1].length());
    assertEquals("PUSOY_BOT_RAISED turn=3 call=on_rejected error=NullPointerException", Raised.line(3, "on_rejected", new NullPointerException()));
  }

  @Test
  void reconnectsWithTheSameTokenAfterTheStreamCloses() throws Exception {
    RecordingBot bot = new RecordingBot(Choice.pass());
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (conn.index == 0) {
                if (req.hasHello()) {
                  conn.send(Messages.welcome(2, false), Messages.promptMsg(1, true, inSeconds(5)));
                } else {
                  conn.send(Messages.accepted(1));
                  conn.close(); // the drill: a clean end before match_ended
                }
              } else if (req.hasHello()) {
                conn.send(Messages.welcome(2, true), Messages.snapshot(), Messages.matchEnded());
                conn.close();
              }
            })) {
      Outcome outcome = runner(bot, referee).play();

      assertEquals(2, referee.conns.size());
      PlayRequest first = referee.conns.get(0).received.get(0);
      PlayRequest second = referee.conns.get(1).received.get(0);
      assertEquals(first, second, "the same Hello, token included");
      assertEquals(1, outcome.place());
    }
  }

  @Test
  void reconnectsAfterAStreamError() throws Exception {
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (conn.index == 0) {
                conn.send(Messages.welcome(2, false));
                conn.fail(Status.UNAVAILABLE.withDescription("gone"));
              } else if (conn.index == 1) {
                conn.send(Messages.refusal(RefusalReason.REFUSAL_REASON_SEAT_TAKEN));
                conn.close();
              } else {
                conn.send(Messages.welcome(2, true), Messages.matchEnded());
                conn.close();
              }
            })) {
      Outcome outcome = runner(new RecordingBot(Choice.pass()), referee).play();
      assertEquals(3, referee.conns.size(), "SEAT_TAKEN right after a drop is retried");
      assertTrue(outcome.ended().isPresent());
    }
  }

  @Test
  void endsCleanlyWhenTheMatchEndedWhileAway() throws Exception {
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (conn.index == 0) {
                conn.send(Messages.welcome(1, false));
                conn.close();
              } else {
                conn.send(Messages.refusal(RefusalReason.REFUSAL_REASON_MATCH_OVER));
                conn.close();
              }
            })) {
      Outcome outcome = runner(new RecordingBot(Choice.pass()), referee).play();
      assertEquals(1, outcome.seat());
      assertTrue(outcome.ended().isEmpty());
      assertEquals(0, outcome.place());
      assertEquals("match m-1 ended while the bot was away; seat 1 placed 0", outcome.summary());
    }
  }

  @Test
  void aRefusalBeforeBeingSeatedIsFinal() throws Exception {
    for (RefusalReason reason :
        List.of(
            RefusalReason.REFUSAL_REASON_BAD_TOKEN,
            RefusalReason.REFUSAL_REASON_VERSION_NOT_SUPPORTED,
            RefusalReason.REFUSAL_REASON_MATCH_OVER)) {
      try (FakeReferee referee =
          new FakeReferee(
              (conn, req) -> {
                conn.send(Messages.refusal(reason));
                conn.close();
              })) {
        RefusedException e =
            assertThrows(
                RefusedException.class, () -> runner(new RecordingBot(Choice.pass()), referee).play());
        assertEquals(reason, e.reason());
        assertEquals(1, referee.conns.size());
      }
    }
  }

  @Test
  void givesUpAfterTheReconnectWindow() throws Exception {
    try (FakeReferee referee =
        new FakeReferee((conn, req) -> conn.fail(Status.UNAVAILABLE.withDescription("down")))) {
      BotRunner runner =
          runner(new RecordingBot(Choice.pass()), referee, options().reconnectWindow(Duration.ofMillis(400)));
      long start = System.nanoTime();
      assertThrows(UnreachableException.class, runner::play);
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertTrue(referee.conns.size() >= 3, "retried with back-off: " + referee.conns.size());
      assertTrue(ms >= 400 && ms < 5000, "gave up after the window: " + ms + " ms");
    }
  }

  @Test
  void aStatusThatAReconnectCannotFixIsThrown() throws Exception {
    try (FakeReferee referee =
        new FakeReferee((conn, req) -> conn.fail(Status.PERMISSION_DENIED.withDescription("no")))) {
      RpcFailedException e =
          assertThrows(
              RpcFailedException.class, () -> runner(new RecordingBot(Choice.pass()), referee).play());
      assertEquals(Status.Code.PERMISSION_DENIED, e.status().getCode());
      assertEquals(1, referee.conns.size());
    }
  }

  @Test
  void aMisbehavingBotRecoversFromItsIllegalPlay() throws Exception {
    Bot bot = new MisbehavingBot(new RecordingBot(Choice.play("4C", "4S")));
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (req.hasHello()) {
                conn.send(Messages.welcome(2, false), Messages.promptMsg(5, false, inSeconds(5)));
              } else if (conn.actions() == 1) {
                conn.send(Messages.rejected(5, RejectionReason.REJECTION_REASON_CARD_NOT_IN_HAND, 2));
              } else if (conn.actions() == 2) {
                conn.send(Messages.accepted(5), Messages.promptMsg(6, false, inSeconds(5)));
              } else {
                conn.send(Messages.accepted(6), Messages.matchEnded());
                conn.close();
              }
            })) {
      runner(bot, referee).play();
      List<Action> actions = actions(referee);
      assertEquals(3, actions.size());
      assertEquals(List.of("3C"), actions.get(0).getPlay().getCardsList(), "not in the hand");
      assertEquals(List.of("3D"), actions.get(1).getPlay().getCardsList(), "the fallback");
      assertEquals(List.of("4C", "4S"), actions.get(2).getPlay().getCardsList(), "the bot's own");
    }
  }

  @Test
  void seatTakenBeforeTheFirstWelcomeIsRetriedWithinTheWindow() throws Exception {
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (conn.index < 2) {
                conn.send(
                    Messages.refusal(
                        conn.index == 0
                            ? RefusalReason.REFUSAL_REASON_SEAT_TAKEN
                            : RefusalReason.REFUSAL_REASON_SHUTTING_DOWN));
                conn.close();
              } else {
                conn.send(Messages.welcome(2, false), Messages.matchEnded());
                conn.close();
              }
            })) {
      Outcome outcome = runner(new RecordingBot(Choice.pass()), referee).play();
      assertEquals(3, referee.conns.size());
      assertTrue(outcome.ended().isPresent());
    }
  }

  @Test
  void seatTakenUntilTheWindowEndsIsARefusal() throws Exception {
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              conn.send(Messages.refusal(RefusalReason.REFUSAL_REASON_SEAT_TAKEN));
              conn.close();
            })) {
      long start = System.nanoTime();
      RefusedException e =
          assertThrows(
              RefusedException.class,
              () ->
                  runner(new RecordingBot(Choice.pass()), referee, options().reconnectWindow(Duration.ofMillis(600)))
                      .play());
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertEquals(RefusalReason.REFUSAL_REASON_SEAT_TAKEN, e.reason());
      assertTrue(ms >= 600, "retried for the whole window: " + ms + " ms");
      assertTrue(referee.conns.size() >= 3, "with backoff, not once: " + referee.conns.size());
    }
  }

  @Test
  void theBackoffIsJitteredAndCapped() {
    for (int n = 1; n <= 10; n++) {
      long d = Math.min(1000, 50L << (n - 1));
      for (int i = 0; i < 50; i++) {
        long ms = BotRunner.backoffMs(n);
        assertTrue(ms >= d / 2 && ms <= d, "retry " + n + ": " + ms + " ms");
      }
    }
  }

  @Test
  void theRejectedFallbackIsNotSentAgain() throws Exception {
    RecordingBot bot = new RecordingBot(Choice.play("3D")); // the fallback of a lead
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (req.hasHello()) {
                conn.send(Messages.welcome(2, false), Messages.promptMsg(3, false, inSeconds(1)));
              } else {
                conn.send(Messages.rejected(3, RejectionReason.REJECTION_REASON_DOES_NOT_BEAT, 2));
                new Thread(
                        () -> {
                          sleep(600);
                          conn.send(Messages.matchEnded());
                          conn.close();
                        })
                    .start();
              }
            })) {
      runner(bot, referee).play();
      assertEquals(1, actions(referee).size(), "the fallback, just rejected, is not resent");
      assertEquals(1, bot.rejections.size());
    }
  }

  /**
   * docs/kits.md section 3: a synchronous choose that ignores its budget and interrupts gets
   * the fallback sent on time; its late answer is dropped; the next prompt, which arrives
   * while it still blocks, waits for the worker (no second choose beside it) and is answered.
   */
  @Test
  void aSynchronousChooseThatOverrunsNeverRacesTheNextPrompt() throws Exception {
    AtomicInteger running = new AtomicInteger();
    AtomicInteger mostAtOnce = new AtomicInteger();
    List<Long> calls = new CopyOnWriteArrayList<>();
    Bot stubborn =
        prompt -> {
          mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
          calls.add(prompt.turnId());
          try {
            if (prompt.turnId() == 1) {
              long end = System.nanoTime() + 1_500_000_000L;
              while (System.nanoTime() < end) { // ignores interrupts, as a busy loop does
                try {
                  Thread.sleep(10);
                } catch (InterruptedException e) {
                  // ignored on purpose
                }
              }
              return Choice.play("2C");
            }
            return Choice.play("4C", "4S");
          } finally {
            running.decrementAndGet();
          }
        };
    long[] sentAt = new long[3];
    List<Long> arrivals = new CopyOnWriteArrayList<>();
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (req.hasHello()) {
                sentAt[0] = System.nanoTime();
                conn.send(
                    Messages.welcome(2, false),
                    PlayResponse.newBuilder()
                        .setPrompt(Messages.prompt(1, true, Instant.now().plusMillis(400)).setTurnTimeMs(400))
                        .build());
                return;
              }
              arrivals.add(System.nanoTime());
              long turn = req.getAction().getTurnId();
              if (turn == 1) {
                sentAt[1] = System.nanoTime();
                conn.send(
                    Messages.accepted(1),
                    Messages.passed(1, 2),
                    Messages.played(2, 1, "5D"),
                    PlayResponse.newBuilder()
                        .setPrompt(Messages.prompt(3, true, Instant.now().plusMillis(3000)).setTurnTimeMs(3000))
                        .build());
              } else if (turn == 3) {
                new Thread(
                        () -> {
                          sleep(600); // a late answer for turn 1 would come now
                          conn.send(Messages.accepted(3), Messages.matchEnded());
                          conn.close();
                        })
                    .start();
              }
            })) {
      runner(stubborn, referee).play();

      List<Action> actions = actions(referee);
      assertEquals(2, actions.size(), "the fallback, then the next turn's answer: " + actions);
      assertEquals(1, actions.get(0).getTurnId());
      assertTrue(actions.get(0).hasPass(), "the fallback of a turn that may pass");
      long fallbackMs = (arrivals.get(0) - sentAt[0]) / 1_000_000;
      assertTrue(fallbackMs >= 250 && fallbackMs < 1000, "the fallback at the budget: " + fallbackMs + " ms");
      assertEquals(3, actions.get(1).getTurnId());
      assertEquals(List.of("4C", "4S"), actions.get(1).getPlay().getCardsList());
      long secondMs = (arrivals.get(1) - sentAt[0]) / 1_000_000;
      assertTrue(secondMs >= 1500, "turn 3 waited for the worker: " + secondMs + " ms");
      assertEquals(1, mostAtOnce.get(), "choose never ran beside itself");
      assertEquals(List.of(1L, 3L), calls);
    }
  }

  @Test
  void batchedEventsReachTheHooksBeforeChooseAndNeedNoResult() throws Exception {
    RecordingBot bot = new RecordingBot(Choice.play("4C", "4S"));
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (req.hasHello()) {
                TurnPrompt.Builder first = Messages.prompt(2, true, inSeconds(5));
                first.addEvents(Messages.played(1, 1, "3C").getEvent());
                conn.send(Messages.welcome(2, false), Messages.snapshot(), PlayResponse.newBuilder().setPrompt(first).build());
              } else if (conn.actions() == 1) {
                // No result: the action shows in the next prompt's events.
                TurnPrompt.Builder second = Messages.prompt(6, true, inSeconds(5));
                second.addEvents(Messages.played(2, 2, "4C", "4S").getEvent());
                second.addEvents(Messages.passed(3, 3).getEvent());
                second.addEvents(Messages.trickCleared(2).getEvent());
                conn.send(PlayResponse.newBuilder().setPrompt(second).build());
              } else {
                conn.send(
                    PlayResponse.newBuilder()
                        .setBatch(
                            EventBatch.newBuilder()
                                .addEvents(Messages.played(6, 2, "4C", "4S").getEvent())
                                .addEvents(Messages.matchEnded().getEvent()))
                        .build());
                conn.close();
              }
            })) {
      Outcome outcome = runner(bot, referee, options().batchEvents(true)).play();
      assertTrue(referee.conns.get(0).received.get(0).getHello().getBatchEvents());
      assertEquals(List.of(2L, 6L), actions(referee).stream().map(Action::getTurnId).toList());
      assertEquals(
          List.of(
              "welcome 2",
              "event PLAYED",
              "choose 2",
              "event PLAYED",
              "event PASSED",
              "event TRICK_CLEARED",
              "choose 6",
              "event PLAYED",
              "event MATCH_ENDED"),
          bot.calls);
      assertEquals(1, outcome.place());
      assertEquals(1, referee.conns.size(), "match_ended in a batch ends the run");
    }
  }

  @Test
  void hooksThatThrowLoseOnlyThatCall() throws Exception {
    List<String> calls = new CopyOnWriteArrayList<>();
    Bot bot =
        new Bot() {
          @Override
          public Choice choose(Prompt prompt) {
            calls.add("choose " + prompt.turnId());
            return Choice.play("4C", "4S");
          }

          @Override
          public void onWelcome(Welcome welcome) {
            throw new IllegalStateException("welcome");
          }

          @Override
          public void onEvent(Event event) {
            calls.add("event");
            throw new AssertionError("an Error, not an Exception");
          }
        };
    try (FakeReferee referee =
        new FakeReferee(
            (conn, req) -> {
              if (req.hasHello()) {
                conn.send(Messages.welcome(2, false), Messages.played(1, 1, "3C"), Messages.promptMsg(2, true, inSeconds(5)));
              } else {
                conn.send(Messages.accepted(2), Messages.matchEnded());
                conn.close();
              }
            })) {
      runner(bot, referee).play();
      assertEquals(List.of("event", "choose 2", "event"), calls);
      assertEquals(1, actions(referee).size());
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
