package io.pusoyreferee.client;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Timestamp;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import io.pusoyreferee.referee.v1.ActionResult;
import io.pusoyreferee.referee.v1.Combination;
import io.pusoyreferee.referee.v1.Event;
import io.pusoyreferee.referee.v1.Play;
import io.pusoyreferee.referee.v1.PlayRequest;
import io.pusoyreferee.referee.v1.PlayResponse;
import io.pusoyreferee.referee.v1.PlayServiceGrpc;
import io.pusoyreferee.referee.v1.PublicState;
import io.pusoyreferee.referee.v1.Refusal;
import io.pusoyreferee.referee.v1.RefusalReason;
import io.pusoyreferee.referee.v1.TurnPrompt;
import io.pusoyreferee.referee.v1.Welcome;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Plays one seat to the end of the match (docs/kits.md): opens the Play stream, says hello
 * with the seat's token, hands every message to the {@link Bot} on one worker thread of its
 * own, sends the bot's answers or the fallback when its budget runs out, recovers from
 * rejections, and reconnects with the same token within the reconnect window.
 *
 * <pre>{@code
 * Outcome outcome = BotRunner.run(new MyBot(), Options.builder().token(token).build());
 * }</pre>
 *
 * <p>Three threads: the caller's reads the stream and never waits for the bot; the worker
 * runs the bot's calls one at a time, in the order the messages came; a timer sends the
 * fallback when a turn's budget runs out first, and interrupts the worker.
 */
public final class BotRunner {

  /** Stream endings after which the runner reconnects (a clean end too, before the match's). */
  static final Set<Status.Code> RETRYABLE =
      EnumSet.of(
          Status.Code.UNAVAILABLE,
          Status.Code.CANCELLED,
          Status.Code.INTERNAL,
          Status.Code.UNKNOWN,
          Status.Code.DEADLINE_EXCEEDED);

  static final long MIN_BACKOFF_MS = 50;
  static final long MAX_BACKOFF_MS = 1000;
  /** How long, at the match's end, the bot's last hooks may take. */
  private static final Duration DRAIN = Duration.ofSeconds(2);

  private final Bot bot;
  private final Channel channel;
  private final Options options;
  private Consumer<String> log;
  private Consumer<String> raised = System.err::println;

  // The open turn and the current stream's sending side; the reader, the worker and the
  // timer all touch them, under this lock.
  private final Object lock = new Object();
  private Turn current;
  private StreamObserver<PlayRequest> out;

  private ThreadPoolExecutor worker;
  private ScheduledExecutorService timer;
  private int seat = -1;
  private String matchId = "";

  /** A runner for {@code bot} on a channel the caller owns (and shuts down). */
  public BotRunner(Bot bot, Channel channel, Options options) {
    this.bot = Objects.requireNonNull(bot, "bot");
    this.channel = Objects.requireNonNull(channel, "channel");
    this.options = Objects.requireNonNull(options, "options");
    String name = bot.name();
    this.log =
        line ->
            System.err.println(
                LocalTime.now().truncatedTo(ChronoUnit.MILLIS) + " " + name + ": " + line);
  }

  /**
   * Plays the seat of {@code options.token()} on the referee at {@code options.address()}
   * until the match ends.
   *
   * @throws UsageException the options cannot work (no token, an unreadable TLS file)
   * @throws RefusedException the referee refused the seat
   * @throws UnreachableException no seat within the reconnect window
   * @throws RpcFailedException the stream failed in a way a reconnect cannot fix
   */
  public static Outcome run(Bot bot, Options options)
      throws UsageException, RefusedException, UnreachableException, RpcFailedException,
          InterruptedException {
    options.check();
    ManagedChannel channel = options.channel();
    try {
      return new BotRunner(bot, channel, options).play();
    } finally {
      channel.shutdownNow();
      channel.awaitTermination(2, TimeUnit.SECONDS);
    }
  }

  /** Where progress lines go (default: standard error, after the time and the bot's name). */
  public BotRunner log(Consumer<String> log) {
    this.log = Objects.requireNonNull(log);
    return this;
  }

  /** Where the raised marker line goes, as it is (default: standard error; {@link Raised}). */
  public BotRunner raised(Consumer<String> raised) {
    this.raised = Objects.requireNonNull(raised);
    return this;
  }

  /**
   * Plays until the match ends.
   *
   * @return the outcome; its {@code ended} is empty when the match ended while the bot was
   *     away
   */
  public Outcome play()
      throws RefusedException, UnreachableException, RpcFailedException, InterruptedException {
    warmUp();
    String name = bot.name();
    worker =
        new ThreadPoolExecutor(
            1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), daemon(name + "-bot"));
    timer = Executors.newSingleThreadScheduledExecutor(daemon(name + "-budget"));
    long windowStart = System.nanoTime(); // from the start, then from each loss of the seat
    int retries = 0;
    RefusedException lastRefusal = null;
    String lastFailure = "";
    try {
      while (true) {
        Stream stream = new Stream();
        try {
          Optional<Outcome> outcome = playOnce(stream);
          if (outcome.isPresent()) {
            return outcome.get();
          }
          lastFailure = "the referee ended the stream before the match ended";
        } catch (RefusedException e) {
          // SEAT_TAKEN: the referee may not have noticed the old stream's end yet, or a
          // restarted bot meets its own ghost; SHUTTING_DOWN: a restarting referee may
          // take the seat back. Both are retried within the window.
          RefusalReason reason = e.reason();
          if (reason != RefusalReason.REFUSAL_REASON_SEAT_TAKEN
              && reason != RefusalReason.REFUSAL_REASON_SHUTTING_DOWN) {
            throw e;
          }
          lastRefusal = e;
          lastFailure = "refused: " + e.getMessage();
        } catch (StatusRuntimeException e) {
          Status status = e.getStatus();
          if (!RETRYABLE.contains(status.getCode())) {
            throw new RpcFailedException(status);
          }
          lastFailure = RpcFailedException.describe(status);
        }
        if (stream.welcomed) {
          log.accept("lost the stream (" + lastFailure + "); reconnecting");
          windowStart = System.nanoTime();
          retries = 0;
          lastRefusal = null;
        }
        long leftNanos = options.reconnectWindow().toNanos() - (System.nanoTime() - windowStart);
        if (leftNanos <= 0) {
          if (lastRefusal != null) {
            throw lastRefusal;
          }
          throw new UnreachableException(
              "could not reach the referee at "
                  + options.address()
                  + " within "
                  + options.reconnectWindow().toMillis()
                  + " ms: "
                  + lastFailure,
              null);
        }
        if (retries > 0) {
          long delayMs = backoffMs(retries);
          log.accept(lastFailure + "; retrying in " + delayMs + " ms");
          TimeUnit.NANOSECONDS.sleep(Math.min(leftNanos, TimeUnit.MILLISECONDS.toNanos(delayMs)));
        }
        retries++;
        if (channel instanceof ManagedChannel managed) {
          managed.resetConnectBackoff(); // dial again now, not on gRPC's own schedule
        }
      }
    } finally {
      worker.shutdownNow();
      timer.shutdownNow();
    }
  }

  /**
   * The wait before the n-th retry (n from 1): a random time in [d/2, d], d = min(1000, 50 *
   * 2^(n-1)) ms. The first retry after a drop is immediate (not asked for here).
   */
  static long backoffMs(int n) {
    long d = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS << Math.min(n - 1, 20));
    return d / 2 + ThreadLocalRandom.current().nextLong(d / 2 + 1);
  }

  // -- one stream ---------------------------------------------------------------------------

  /** What one stream learnt. */
  private static final class Stream {
    boolean welcomed;
  }

  /** One message read off the stream, with the time it was read. */
  private record Inbound(PlayResponse message, Throwable error, long nanos, Instant wall) {}

  /** The response side of a stream, queued for the reader with each message's receipt. */
  private static final class Inbox implements ClientResponseObserver<PlayRequest, PlayResponse> {
    final BlockingQueue<Inbound> queue = new LinkedBlockingQueue<>();
    volatile ClientCallStreamObserver<PlayRequest> call;

    @Override
    public void beforeStart(ClientCallStreamObserver<PlayRequest> requestStream) {
      call = requestStream;
    }

    @Override
    public void onNext(PlayResponse value) {
      queue.add(new Inbound(value, null, System.nanoTime(), Instant.now()));
    }

    @Override
    public void onError(Throwable t) {
      queue.add(new Inbound(null, t, System.nanoTime(), Instant.now()));
    }

    @Override
    public void onCompleted() {
      queue.add(new Inbound(null, null, System.nanoTime(), Instant.now()));
    }
  }

  /** Plays over one stream: the outcome at the match's end, empty if the stream ended first. */
  private Optional<Outcome> playOnce(Stream stream) throws RefusedException, InterruptedException {
    Inbox inbox = new Inbox();
    StreamObserver<PlayRequest> requests = PlayServiceGrpc.newStub(channel).play(inbox);
    synchronized (lock) {
      out = requests;
      send(Requests.hello(options.token(), bot.name(), bot.wantLegalPlays(), options.batchEvents()));
    }
    try {
      while (true) {
        Inbound in = inbox.queue.take();
        if (in.message() == null) {
          if (in.error() == null) {
            return Optional.empty(); // a clean end before match_ended
          }
          throw Status.fromThrowable(in.error()).asRuntimeException();
        }
        PlayResponse msg = in.message();
        switch (msg.getKindCase()) {
          case WELCOME -> {
            Welcome welcome = msg.getWelcome();
            seat = welcome.getSeat();
            matchId = welcome.getMatchId();
            stream.welcomed = true;
            log.accept(
                (welcome.getReconnect() ? "back in seat " : "seated at seat ")
                    + welcome.getSeat()
                    + " of match "
                    + welcome.getMatchId());
            tell("onWelcome", () -> bot.onWelcome(welcome));
          }
          case REFUSAL -> {
            Refusal refusal = msg.getRefusal();
            if (seat >= 0 && refusal.getReason() == RefusalReason.REFUSAL_REASON_MATCH_OVER) {
              log.accept("the match ended while the bot was away");
              return Optional.of(new Outcome(seat, matchId, Optional.empty()));
            }
            throw new RefusedException(refusal);
          }
          case SNAPSHOT -> tell("onSnapshot", () -> bot.onSnapshot(msg.getSnapshot()));
          case EVENT -> {
            if (onEvent(msg.getEvent())) {
              return finish(requests, inbox, msg.getEvent());
            }
          }
          case BATCH -> {
            for (Event event : msg.getBatch().getEventsList()) {
              if (onEvent(event)) {
                return finish(requests, inbox, event);
              }
            }
          }
          case PROMPT -> {
            TurnPrompt raw = msg.getPrompt();
            for (Event event : raw.getEventsList()) {
              onEvent(event); // batched: the events that led to this turn, before choose
            }
            Budget budget =
                Budget.forPrompt(raw, in.nanos(), in.wall(), options.safetyMargin(), bot.useTimeBank());
            onPrompt(Prompt.from(raw, budget));
          }
          case RESULT -> onResult(msg.getResult());
          case KIND_NOT_SET -> {
            // A message kind newer than this library: nothing to do.
          }
        }
      }
    } finally {
      synchronized (lock) {
        closeTurn();
        out = null;
      }
      ClientCallStreamObserver<PlayRequest> call = inbox.call;
      if (call != null) {
        call.cancel("the bot is done with this stream", null); // a no-op once the call ended
      }
    }
  }

  /** Hands an event to the bot; true when it ends the match. */
  private boolean onEvent(Event event) {
    tell("onEvent", () -> bot.onEvent(event));
    long turnId = -1;
    if (event.hasPlayed()) {
      turnId = event.getPlayed().getTurnId();
    } else if (event.hasPassed()) {
      turnId = event.getPassed().getTurnId();
    }
    if (turnId >= 0) {
      synchronized (lock) {
        if (current != null && current.prompt.turnId() == turnId) {
          closeTurn(); // the turn is over, whoever acted
        }
      }
    }
    return event.hasMatchEnded();
  }

  private void onPrompt(Prompt prompt) {
    synchronized (lock) {
      closeTurn();
      Turn turn = new Turn(prompt, Fallback.of(prompt));
      current = turn;
      ask(turn, 0, "choose", bot::choose);
    }
  }

  private void onResult(ActionResult result) {
    synchronized (lock) {
      Turn turn = current;
      Rejection rejection = Rejection.from(result);
      if (!result.getAccepted()) {
        log.accept("turn " + result.getTurnId() + " rejected: " + rejection);
      }
      if (turn == null || turn.closed || result.getTurnId() != turn.prompt.turnId()) {
        return; // the verdict on a stale answer: nothing to do
      }
      if (result.getAccepted() || result.getAttemptsLeft() <= 0) {
        closeTurn();
        return;
      }
      if (turn.timer != null) {
        turn.timer.cancel(false);
      }
      turn.attempt++;
      ask(turn, turn.attempt, "onRejected", p -> bot.onRejected(p, rejection));
    }
  }

  /** At match_ended: close our side, let the bot's last hooks run, see the stream end. */
  private Optional<Outcome> finish(StreamObserver<PlayRequest> requests, Inbox inbox, Event ended)
      throws InterruptedException {
    synchronized (lock) {
      closeTurn();
      try {
        requests.onCompleted();
      } catch (RuntimeException e) {
        // The call ended already.
      }
      out = null;
    }
    Future<?> drained = worker.submit(() -> {});
    try {
      drained.get(DRAIN.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      log.accept("the bot's last calls did not finish in " + DRAIN.toSeconds() + " s");
    }
    Inbound last = inbox.queue.poll(1, TimeUnit.SECONDS); // the referee ends the stream
    if (last != null && last.message() != null) {
      log.accept("a message after match_ended was ignored");
    }
    return Optional.of(new Outcome(seat, matchId, Optional.of(ended.getMatchEnded())));
  }

  // -- the open turn ------------------------------------------------------------------------

  /** The open turn: the attempt being answered and what was sent for it. */
  private static final class Turn {
    final Prompt prompt;
    final Choice fallback; // computed before the bot could see the prompt
    int attempt;
    int answered = -1; // the last attempt answered
    boolean closed;
    Choice lastSent;
    ScheduledFuture<?> timer;
    Future<?> task;

    Turn(Prompt prompt, Choice fallback) {
      this.prompt = prompt;
      this.fallback = fallback;
    }
  }

  private boolean open(Turn turn, int attempt) {
    return turn == current && !turn.closed && turn.attempt == attempt && turn.answered < attempt;
  }

  /**
   * Queues {@code call} (choose or onRejected) on the worker under the turn's budget, and arms
   * the timer that sends the fallback, and interrupts the worker, when the budget runs out
   * first. Called with the lock held.
   */
  private void ask(Turn turn, int attempt, String what, Function<Prompt, Choice> call) {
    long delay = Math.max(0, turn.prompt.budget().endNanos() - System.nanoTime());
    turn.timer = timer.schedule(() -> budgetRanOut(turn, attempt, what), delay, TimeUnit.NANOSECONDS);
    turn.task =
        worker.submit(
            () -> {
              synchronized (lock) {
                if (!open(turn, attempt) || turn.prompt.budget().expired()) {
                  return; // no longer wanted: the bot is not asked
                }
              }
              Choice choice = null;
              try {
                choice = call.apply(turn.prompt);
                if (choice == null) {
                  log.accept(what + " returned null on turn " + turn.prompt.turnId() + "; sending the fallback");
                }
              } catch (Throwable t) { // NOPMD: every failure of the bot's code is caught
                log.accept(what + " threw " + t + " on turn " + turn.prompt.turnId() + "; sending the fallback");
                boolean late;
                synchronized (lock) {
                  late = !open(turn, attempt); // interrupted at its budget: no raise of its own
                }
                if (!late) {
                  String named = what.equals("choose") ? "choose" : "on_rejected";
                  raised.accept(Raised.line(turn.prompt.turnId(), named, t));
                }
              }
              synchronized (lock) {
                answer(turn, attempt, choice, what);
              }
            });
  }

  private void budgetRanOut(Turn turn, int attempt, String what) {
    synchronized (lock) {
      if (!open(turn, attempt)) {
        return;
      }
      log.accept("turn " + turn.prompt.turnId() + ": " + what + " is past its budget; sending the fallback");
      answer(turn, attempt, null, what);
      if (turn.task != null) {
        turn.task.cancel(true); // interrupts the worker if it is still in that call
      }
    }
  }

  /**
   * Sends {@code choice} (null: the fallback) for {@code attempt}, unless the turn moved on or
   * that attempt was answered already. Called with the lock held.
   */
  private void answer(Turn turn, int attempt, Choice choice, String what) {
    if (!open(turn, attempt)) {
      if (choice != null) {
        log.accept(
            "turn " + turn.prompt.turnId() + ": " + what + " answered " + choice + " too late; dropped");
      }
      return;
    }
    turn.answered = attempt;
    if (turn.timer != null) {
      turn.timer.cancel(false);
    }
    Choice send = choice == null ? turn.fallback : choice;
    if (attempt > 0 && turn.lastSent != null && sameCards(send, turn.lastSent)) {
      log.accept(
          "turn "
              + turn.prompt.turnId()
              + ": "
              + send
              + " was just rejected; not sent again (the referee acts at its deadline)");
      return;
    }
    turn.lastSent = send;
    send(Requests.action(turn.prompt.turnId(), send));
  }

  /** Called with the lock held. */
  private void closeTurn() {
    Turn turn = current;
    if (turn != null && !turn.closed) {
      turn.closed = true;
      if (turn.timer != null) {
        turn.timer.cancel(false);
      }
      if (turn.task != null) {
        turn.task.cancel(true); // a call still running is interrupted; one still queued, skipped
      }
    }
  }

  static boolean sameCards(Choice a, Choice b) {
    List<String> x = new ArrayList<>();
    List<String> y = new ArrayList<>();
    a.cards().forEach(c -> x.add(c.toUpperCase(Locale.ROOT)));
    b.cards().forEach(c -> y.add(c.toUpperCase(Locale.ROOT)));
    x.sort(null);
    y.sort(null);
    return x.equals(y);
  }

  /** Called with the lock held. */
  private void send(PlayRequest request) {
    if (out == null) {
      return;
    }
    try {
      out.onNext(request);
    } catch (RuntimeException e) {
      log.accept("could not send on a closed stream: " + e.getMessage()); // the reader sees how
    }
  }

  /** Queues a hook call on the worker, guarded. */
  private void tell(String hook, Runnable call) {
    worker.execute(
        () -> {
          try {
            call.run();
          } catch (Throwable t) { // NOPMD: a failing hook loses only that call
            log.accept(hook + " threw " + t);
          }
        });
  }

  // -- start-up -----------------------------------------------------------------------------

  /**
   * Loads and exercises the classes of the prompt path once before connecting, so that the
   * first real prompt is not answered by a cold JVM (it matters on a busy machine).
   */
  static void warmUp() {
    try {
      TurnPrompt sample =
          TurnPrompt.newBuilder()
              .setTurnId(1)
              .setDeadline(Timestamp.newBuilder().setSeconds(Instant.now().getEpochSecond()))
              .setTurnTimeMs(1000)
              .addAllHand(Deck.CARDS.subList(0, 13))
              .addLegalPlays(
                  Play.newBuilder().addCards("3C").setCombination(Combination.COMBINATION_SINGLE))
              .setState(PublicState.newBuilder().setHandNumber(1).addAllCardCounts(List.of(13, 13, 13, 13)))
              .build();
      PlayResponse parsed =
          PlayResponse.parseFrom(PlayResponse.newBuilder().setPrompt(sample).build().toByteArray());
      Prompt prompt = Prompt.from(parsed.getPrompt());
      Requests.action(prompt.turnId(), Fallback.of(prompt)).toByteArray();
      Requests.pass(prompt.turnId()).toByteArray();
      // The helpers a bot is likely to use on its first turn.
      Tracker tracker = new Tracker();
      tracker.onWelcome(Welcome.getDefaultInstance());
      tracker.onEvent(
          Event.newBuilder()
              .setPlayed(io.pusoyreferee.referee.v1.Played.newBuilder().setPlay(sample.getLegalPlays(0)))
              .build());
      Rules.DEFAULT.beats(List.of("3S", "3H"), List.of("3C", "3D"), false);
      Rejection.from(ActionResult.getDefaultInstance()).toString();
      CompletableFuture.runAsync(() -> {}).join();
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Daemon threads, so that a runaway bot call never keeps the JVM alive. */
  private static ThreadFactory daemon(String name) {
    return task -> {
      Thread thread = new Thread(task, name);
      thread.setDaemon(true);
      return thread;
    };
  }
}
