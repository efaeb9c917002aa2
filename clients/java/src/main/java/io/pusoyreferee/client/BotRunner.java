package io.pusoyreferee.client;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Timestamp;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
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
import io.pusoyreferee.referee.v1.PlayServiceGrpc;
import io.pusoyreferee.referee.v1.PlayResponse;
import io.pusoyreferee.referee.v1.PublicState;
import io.pusoyreferee.referee.v1.Refusal;
import io.pusoyreferee.referee.v1.RefusalReason;
import io.pusoyreferee.referee.v1.TurnPrompt;
import io.pusoyreferee.referee.v1.Welcome;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Plays one seat to the end of the match: opens the Play stream, says hello with the seat's
 * token, hands prompts to the {@link Bot} and sends its answers, recovers from rejections,
 * honours each prompt's deadline, and reconnects with the same token when the stream drops.
 *
 * <pre>{@code
 * MatchOutcome outcome = BotRunner.run(new MyBot(), "127.0.0.1:50051", token);
 * }</pre>
 */
public final class BotRunner {

  /** Give up reconnecting after this long without getting the seat back. */
  public static final Duration DEFAULT_RECONNECT_WINDOW = Duration.ofSeconds(30);

  /** Answer this long before the deadline when the bot's own choice runs late. */
  public static final Duration DEFAULT_DEADLINE_MARGIN = Duration.ofMillis(50);

  /** Stream failures after which the runner reconnects. */
  static final Set<Status.Code> RECONNECT_CODES =
      EnumSet.of(
          Status.Code.UNAVAILABLE, Status.Code.CANCELLED, Status.Code.INTERNAL, Status.Code.UNKNOWN);

  private static final long FIRST_BACKOFF_MS = 50;
  private static final long MAX_BACKOFF_MS = 1000;

  private final Bot bot;
  private final Channel channel;
  private final String token;
  private Duration reconnectWindow = DEFAULT_RECONNECT_WINDOW;
  private Duration deadlineMargin = DEFAULT_DEADLINE_MARGIN;
  private Consumer<String> log;

  /** A runner for {@code bot} on a channel the caller owns (and shuts down). */
  public BotRunner(Bot bot, Channel channel, String token) {
    this.bot = Objects.requireNonNull(bot, "bot");
    this.channel = Objects.requireNonNull(channel, "channel");
    this.token = Objects.requireNonNull(token, "token");
    this.log = line -> System.err.println(LocalTime.now().truncatedTo(ChronoUnit.MILLIS) + " " + bot.name() + ": " + line);
  }

  /**
   * Plays the seat of {@code token} on the referee at {@code address} ("host:port") until the
   * match ends.
   */
  public static MatchOutcome run(Bot bot, String address, String token)
      throws BotRefusedException, RefereeUnreachableException, InterruptedException {
    ManagedChannel channel =
        ManagedChannelBuilder.forTarget(address).usePlaintext().userAgent("pusoy-java-kit").build();
    try {
      return new BotRunner(bot, channel, token).play();
    } finally {
      channel.shutdownNow();
      channel.awaitTermination(2, TimeUnit.SECONDS);
    }
  }

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
      Requests.action(prompt.turnId(), prompt.fallback()).toByteArray();
      Requests.pass(prompt.turnId()).toByteArray();
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException(e);
    }
  }

  /** How long to keep trying to get the seat back after a drop (default 30 s). */
  public BotRunner reconnectWindow(Duration window) {
    this.reconnectWindow = Objects.requireNonNull(window);
    return this;
  }

  /** How long before the deadline to give up on {@link Bot#choose} (default 50 ms). */
  public BotRunner deadlineMargin(Duration margin) {
    this.deadlineMargin = Objects.requireNonNull(margin);
    return this;
  }

  /** Where progress lines go (default: standard error, after the time and the bot's name). */
  public BotRunner log(Consumer<String> log) {
    this.log = Objects.requireNonNull(log);
    return this;
  }

  /**
   * Plays until the match ends.
   *
   * @return the outcome; its {@code ended} is empty when the match ended while the bot was
   *     disconnected
   * @throws BotRefusedException the referee refused the seat (a SEAT_TAKEN right after a drop
   *     is retried instead)
   * @throws RefereeUnreachableException no stream got the seat back within the reconnect window
   * @throws StatusRuntimeException the stream failed in a way a reconnect cannot fix
   */
  public MatchOutcome play()
      throws BotRefusedException, RefereeUnreachableException, InterruptedException {
    warmUp();
    Seat held = new Seat();
    ExecutorService workers = Executors.newCachedThreadPool(new WorkerThreads(bot.name()));
    long outageStart = System.nanoTime();
    long delayMs = 0; // the first reconnect is immediate, then back off
    Exception lastError = null;
    try {
      while (true) {
        held.welcomedOnThisStream = false;
        try {
          Optional<MatchOutcome> outcome = playOnce(held, workers);
          if (outcome.isPresent()) {
            return outcome.get();
          }
          log.accept("the referee closed the stream before the match ended; reconnecting");
        } catch (BotRefusedException e) {
          // Right after a drop the referee may not have noticed yet: retry a seat it still
          // thinks is taken. Every other refusal is final.
          if (!(held.seated() && e.reason() == RefusalReason.REFUSAL_REASON_SEAT_TAKEN)) {
            throw e;
          }
          if (!(lastError instanceof BotRefusedException)) {
            log.accept("the referee still holds the seat for the old stream; retrying");
          }
          lastError = e;
        } catch (StatusRuntimeException e) {
          if (!RECONNECT_CODES.contains(e.getStatus().getCode())) {
            throw e;
          }
          if (held.welcomedOnThisStream || lastError == null) {
            log.accept("stream failed (" + describe(e.getStatus()) + "); reconnecting");
          }
          lastError = e;
        }
        if (held.welcomedOnThisStream) {
          outageStart = System.nanoTime(); // a fresh drop: a new window, reconnect at once
          delayMs = 0;
        }
        if (System.nanoTime() - outageStart > reconnectWindow.toNanos()) {
          throw new RefereeUnreachableException(
              "could not reach the referee within " + reconnectWindow.toSeconds() + " s"
                  + (lastError == null ? "" : ": " + lastError.getMessage()),
              lastError);
        }
        if (delayMs > 0) {
          Thread.sleep(delayMs + ThreadLocalRandom.current().nextLong(delayMs / 4 + 1));
        }
        delayMs = delayMs == 0 ? FIRST_BACKOFF_MS : Math.min(delayMs * 2, MAX_BACKOFF_MS);
        if (channel instanceof ManagedChannel managed) {
          managed.resetConnectBackoff(); // let gRPC dial again now, not on its own schedule
        }
      }
    } finally {
      workers.shutdownNow();
    }
  }

  /** What the runner knows about the seat across streams. */
  private static final class Seat {
    int seat = -1;
    String matchId = "";
    boolean welcomedOnThisStream;

    boolean seated() {
      return seat >= 0;
    }
  }

  /** One message from the response side of a stream. */
  private sealed interface Inbound permits Message, Failed, Closed {}

  private record Message(PlayResponse response) implements Inbound {}

  private record Failed(Throwable error) implements Inbound {}

  private record Closed() implements Inbound {}

  /** Responses go to a queue read by the runner's thread, so the bot sees one at a time. */
  private static final class Inbox implements ClientResponseObserver<PlayRequest, PlayResponse> {
    final BlockingQueue<Inbound> queue = new LinkedBlockingQueue<>();
    /** Completes when the response side ends, cleanly or not. */
    final CompletableFuture<Void> ended = new CompletableFuture<>();
    volatile ClientCallStreamObserver<PlayRequest> call;

    @Override
    public void beforeStart(ClientCallStreamObserver<PlayRequest> requestStream) {
      call = requestStream;
    }

    @Override
    public void onNext(PlayResponse value) {
      queue.add(new Message(value));
    }

    @Override
    public void onError(Throwable t) {
      queue.add(new Failed(t));
      ended.complete(null);
    }

    @Override
    public void onCompleted() {
      queue.add(new Closed());
      ended.complete(null);
    }
  }

  /** Plays over one stream: the outcome at the match's end, empty if the stream ended first. */
  private Optional<MatchOutcome> playOnce(Seat held, ExecutorService workers)
      throws BotRefusedException, InterruptedException {
    Inbox inbox = new Inbox();
    StreamObserver<PlayRequest> out = PlayServiceGrpc.newStub(channel).play(inbox);
    try {
      send(out, Requests.hello(token, bot.name(), bot.wantLegalPlays()));
      Prompt prompt = null;
      while (true) {
        Inbound in = inbox.queue.take();
        if (in instanceof Closed) {
          return Optional.empty();
        }
        if (in instanceof Failed failed) {
          throw Status.fromThrowable(failed.error()).asRuntimeException();
        }
        PlayResponse msg = ((Message) in).response();
        switch (msg.getKindCase()) {
          case WELCOME -> {
            Welcome welcome = msg.getWelcome();
            held.seat = welcome.getSeat();
            held.matchId = welcome.getMatchId();
            held.welcomedOnThisStream = true;
            log.accept(
                (welcome.getReconnect() ? "back in seat " : "seated at seat ")
                    + welcome.getSeat()
                    + " of match "
                    + welcome.getMatchId());
            guard("onWelcome", () -> bot.onWelcome(welcome));
          }
          case REFUSAL -> {
            Refusal refusal = msg.getRefusal();
            if (held.seated() && refusal.getReason() == RefusalReason.REFUSAL_REASON_MATCH_OVER) {
              log.accept("the match ended while the bot was away");
              return Optional.of(new MatchOutcome(held.seat, held.matchId, Optional.empty()));
            }
            throw new BotRefusedException(refusal);
          }
          case SNAPSHOT -> guard("onSnapshot", () -> bot.onSnapshot(msg.getSnapshot()));
          case EVENT -> {
            Event event = msg.getEvent();
            guard("onEvent", () -> bot.onEvent(event));
            if (event.hasMatchEnded()) {
              finish(out, inbox);
              return Optional.of(
                  new MatchOutcome(held.seat, held.matchId, Optional.of(event.getMatchEnded())));
            }
          }
          case PROMPT -> {
            prompt = Prompt.from(msg.getPrompt(), Instant.now());
            Optional<Choice> choice = decide(prompt, workers, inbox);
            if (choice.isPresent()) {
              send(out, Requests.action(prompt.turnId(), choice.get()));
            }
          }
          case RESULT -> {
            ActionResult result = msg.getResult();
            if (!result.getAccepted()) {
              onRejected(out, prompt, result);
            }
          }
          case KIND_NOT_SET -> {
            // A message kind newer than this library: nothing to do.
          }
        }
      }
    } finally {
      ClientCallStreamObserver<PlayRequest> call = inbox.call;
      if (call != null) {
        call.cancel("the bot is done with this stream", null); // no-op once the call ended
      }
    }
  }

  private void onRejected(StreamObserver<PlayRequest> out, Prompt prompt, ActionResult result) {
    log.accept(
        "turn "
            + result.getTurnId()
            + " rejected: "
            + result.getReason()
            + " ("
            + result.getMessage()
            + "), "
            + result.getAttemptsLeft()
            + " attempt(s) left");
    if (prompt == null || result.getTurnId() != prompt.turnId() || result.getAttemptsLeft() <= 0) {
      return;
    }
    Choice retry;
    try {
      retry = orPass(bot.onRejected(prompt, result));
    } catch (RuntimeException e) {
      log.accept("onRejected threw " + e + "; sending the fallback");
      retry = fallback(prompt);
    }
    log.accept("turn " + prompt.turnId() + ": sending " + retry + " instead");
    send(out, Requests.action(prompt.turnId(), retry));
  }

  /**
   * The bot's choice, cut short by the prompt's deadline (time bank included); empty when the
   * stream ended while the bot was thinking (the turn is lost, the runner reconnects).
   */
  private Optional<Choice> decide(Prompt prompt, ExecutorService workers, Inbox inbox)
      throws InterruptedException {
    Duration budget = Duration.between(Instant.now(), prompt.latestAnswer()).minus(deadlineMargin);
    if (budget.isNegative() || budget.isZero()) {
      log.accept(
          "turn "
              + prompt.turnId()
              + ": "
              + budget.plus(deadlineMargin).toMillis()
              + " ms left before the deadline (margin "
              + deadlineMargin.toMillis()
              + " ms); sending the fallback");
      return Optional.of(fallback(prompt));
    }
    CompletableFuture<Choice> result = new CompletableFuture<>();
    Future<?> task =
        workers.submit(
            () -> {
              try {
                result.complete(bot.choose(prompt));
              } catch (Throwable t) {
                result.completeExceptionally(t);
              }
            });
    try {
      CompletableFuture.anyOf(result, inbox.ended).get(budget.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      task.cancel(true);
      log.accept("turn " + prompt.turnId() + ": choose() ran past the deadline; sending the fallback");
      return Optional.of(fallback(prompt));
    } catch (ExecutionException e) {
      // Handled below: either choose() threw or the stream failed.
    } catch (InterruptedException e) {
      task.cancel(true);
      throw e;
    }
    if (!result.isDone()) {
      task.cancel(true); // the stream ended first: nobody waits for this answer any more
      return Optional.empty();
    }
    try {
      return Optional.of(orPass(result.getNow(null)));
    } catch (CompletionException e) {
      log.accept("turn " + prompt.turnId() + ": choose() threw " + e.getCause() + "; sending the fallback");
      return Optional.of(fallback(prompt));
    }
  }

  private Choice fallback(Prompt prompt) {
    try {
      return orPass(bot.fallback(prompt));
    } catch (RuntimeException e) {
      log.accept("fallback() threw " + e + "; using the library's fallback");
      return prompt.fallback();
    }
  }

  private static Choice orPass(Choice choice) {
    return choice == null ? Choice.pass() : choice;
  }

  private void send(StreamObserver<PlayRequest> out, PlayRequest request) {
    try {
      out.onNext(request);
    } catch (RuntimeException e) {
      // The call already ended; the next message on the inbox says how.
      log.accept("could not send on a closed stream: " + e.getMessage());
    }
  }

  /** After match_ended: close our side and give the referee a moment to end the stream. */
  private static void finish(StreamObserver<PlayRequest> out, Inbox inbox)
      throws InterruptedException {
    try {
      out.onCompleted();
    } catch (RuntimeException e) {
      return;
    }
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
    while (System.nanoTime() < until) {
      Inbound in = inbox.queue.poll(until - System.nanoTime(), TimeUnit.NANOSECONDS);
      if (in == null || in instanceof Closed || in instanceof Failed) {
        return;
      }
    }
  }

  private void guard(String hook, Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      log.accept(hook + " threw " + e);
    }
  }

  private static String describe(Status status) {
    return status.getDescription() == null
        ? status.getCode().toString()
        : status.getCode() + ": " + status.getDescription();
  }

  /** Daemon threads for {@link Bot#choose}, so a runaway choice never keeps the JVM alive. */
  private static final class WorkerThreads implements java.util.concurrent.ThreadFactory {
    private final String name;
    private final AtomicInteger count = new AtomicInteger();

    WorkerThreads(String name) {
      this.name = name;
    }

    @Override
    public Thread newThread(Runnable task) {
      Thread thread = new Thread(task, name + "-choose-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    }
  }
}
