package io.pusoyreferee.conformance;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import io.pusoyreferee.client.Bot;
import io.pusoyreferee.client.BotLauncher;
import io.pusoyreferee.client.Choice;
import io.pusoyreferee.client.Fallback;
import io.pusoyreferee.client.Prompt;
import io.pusoyreferee.client.Rejection;
import io.pusoyreferee.client.Tracker;
import io.pusoyreferee.referee.v1.Event;
import io.pusoyreferee.referee.v1.Snapshot;
import io.pusoyreferee.referee.v1.Welcome;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The Java kit's conformance bot: a bot whose behaviour the transcript scripts
 * (clients/conformance/README.md), run through the kit's own {@link BotLauncher}, so that
 * flags, environment variables, TLS and exit codes are the real ones.
 *
 * <p>PUSOY_CONFORMANCE_BOT is a JSON object: {@code choose} and {@code on_rejected} map a turn
 * id to a step ({@code {"play": [...]}}, {@code {"pass": true}}, {@code {"block_ms": N, ...}}
 * to block first, ignoring interrupts, {@code {"until_remaining_ms": N, ...}} to wait until
 * the budget has N ms left, {@code {"throw": "why"}}); {@code throw_in} names hooks that
 * throw; {@code want_legal_plays} is passed on; {@code batch_events} true asks for batched
 * events (as PUSOY_BATCH_EVENTS=1 does). Unlisted turns play the weakest legal play (or pass).
 *
 * <p>Checks of what the hooks were given, each ending the bot at once with exit code 70 when
 * it fails: {@code tracker} (the kit's {@link Tracker}, fed by the hooks, must hold each
 * prompt's state and hand when {@code choose} is called), {@code events_before} (turn id to
 * the number of {@code onEvent} calls made before that turn's {@code choose}), {@code
 * events_total} ({@code onEvent} calls in the whole run, checked when the run ends with 0).
 */
public final class ConformanceBot implements Bot {

  static final int EXIT_CHECK_FAILED = 70;

  private final Struct script;
  private final Tracker tracker;
  private volatile int events;

  ConformanceBot(Struct script) {
    this.script = script;
    this.tracker = bool(script, "tracker", false) ? new Tracker() : null;
  }

  /** A scripted check failed: say why and stop at once (the transcript then fails). */
  private static void checkFailed(String why) {
    System.err.println("java-conformance: check failed: " + why);
    System.err.flush();
    Runtime.getRuntime().halt(EXIT_CHECK_FAILED);
  }

  public static void main(String[] args) {
    Struct script;
    try {
      Struct.Builder builder = Struct.newBuilder();
      JsonFormat.parser().merge(System.getenv().getOrDefault("PUSOY_CONFORMANCE_BOT", "{}"), builder);
      script = builder.build();
    } catch (InvalidProtocolBufferException e) {
      System.err.println("java-conformance: PUSOY_CONFORMANCE_BOT: " + e.getMessage());
      System.exit(BotLauncher.EXIT_USAGE);
      return;
    }
    Map<String, String> env = new HashMap<>(System.getenv());
    if (bool(script, "batch_events", false)) {
      env.put("PUSOY_BATCH_EVENTS", "1");
    }
    ConformanceBot bot = new ConformanceBot(script);
    int code = BotLauncher.run(args, env, options -> bot, System.out, System.err);
    Value total = script.getFieldsOrDefault("events_total", null);
    if (code == 0 && total != null && (long) total.getNumberValue() != bot.events) {
      checkFailed(bot.events + " events in the run, not " + (long) total.getNumberValue());
    }
    System.exit(code);
  }

  @Override
  public String name() {
    return "java-conformance";
  }

  @Override
  public boolean wantLegalPlays() {
    return bool(script, "want_legal_plays", true);
  }

  @Override
  public Choice choose(Prompt prompt) {
    Value before = script.getFieldsOrDefault("events_before", Value.getDefaultInstance())
        .getStructValue()
        .getFieldsOrDefault(Long.toString(prompt.turnId()), null);
    if (before != null && (long) before.getNumberValue() != events) {
      checkFailed("turn " + prompt.turnId() + ": " + events + " events before choose, not "
          + (long) before.getNumberValue());
    }
    if (tracker != null) {
      String why = tracker.differsFrom(prompt.message());
      if (why != null) {
        checkFailed(why);
      }
    }
    Struct step = step("choose", prompt.turnId());
    if (step == null) {
      return prompt.legalPlays().isEmpty() ? Choice.pass() : Choice.play(prompt.legalPlays().get(0));
    }
    return run(step, prompt);
  }

  @Override
  public Choice onRejected(Prompt prompt, Rejection rejection) {
    throwIn("on_rejected");
    Struct step = step("on_rejected", prompt.turnId());
    return step == null ? Fallback.of(prompt) : run(step, prompt);
  }

  @Override
  public void onWelcome(Welcome welcome) {
    if (tracker != null) {
      tracker.onWelcome(welcome);
    }
    throwIn("on_welcome");
  }

  @Override
  public void onSnapshot(Snapshot snapshot) {
    if (tracker != null) {
      tracker.onSnapshot(snapshot);
    }
    throwIn("on_snapshot");
  }

  @Override
  public void onEvent(Event event) {
    events++;
    if (tracker != null) {
      tracker.onEvent(event);
    }
    throwIn("on_event");
  }

  private Struct step(String table, long turnId) {
    Value steps = script.getFieldsOrDefault(table, null);
    if (steps == null || !steps.hasStructValue()) {
      return null;
    }
    Value step = steps.getStructValue().getFieldsOrDefault(Long.toString(turnId), null);
    return step == null ? null : step.getStructValue();
  }

  private static Choice run(Struct step, Prompt prompt) {
    if (step.containsFields("block_ms")) {
      sleepIgnoringInterrupts((long) step.getFieldsOrThrow("block_ms").getNumberValue());
    }
    if (step.containsFields("until_remaining_ms")) {
      long ms = (long) step.getFieldsOrThrow("until_remaining_ms").getNumberValue();
      while (prompt.budget().remaining().toMillis() > ms) {
        sleepIgnoringInterrupts(5);
      }
    }
    if (step.containsFields("throw")) {
      throw new IllegalStateException(step.getFieldsOrThrow("throw").getStringValue());
    }
    if (bool(step, "pass", false)) {
      return Choice.pass();
    }
    List<String> cards = new ArrayList<>();
    ListValue play = step.getFieldsOrDefault("play", Value.getDefaultInstance()).getListValue();
    for (Value card : play.getValuesList()) {
      cards.add(card.getStringValue());
    }
    return Choice.play(cards);
  }

  /** Blocks the worker for {@code ms}, as a bot that ignores its budget and interrupts does. */
  private static void sleepIgnoringInterrupts(long ms) {
    long end = System.nanoTime() + ms * 1_000_000;
    boolean interrupted = false;
    while (true) {
      long left = end - System.nanoTime();
      if (left <= 0) {
        break;
      }
      try {
        Thread.sleep(Math.max(1, left / 1_000_000));
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private void throwIn(String hook) {
    Value hooks = script.getFieldsOrDefault("throw_in", null);
    if (hooks != null) {
      for (Value v : hooks.getListValue().getValuesList()) {
        if (hook.equals(v.getStringValue())) {
          throw new IllegalStateException("scripted failure in " + hook);
        }
      }
    }
  }

  private static boolean bool(Struct s, String key, boolean unset) {
    Value v = s.getFieldsOrDefault(key, null);
    return v == null ? unset : v.getBoolValue();
  }
}
