package io.pusoyreferee.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import io.grpc.Status;
import io.pusoyreferee.referee.v1.Combination;
import io.pusoyreferee.referee.v1.Event;
import io.pusoyreferee.referee.v1.EventBatch;
import io.pusoyreferee.referee.v1.PlayResponse;
import io.pusoyreferee.referee.v1.Snapshot;
import io.pusoyreferee.referee.v1.TurnPrompt;
import io.pusoyreferee.referee.v1.Welcome;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The comparator against the reference judge's verdicts, and the tracker against the
 * referee's own public state in recorded streams: fed directly, and through the runner over
 * gRPC with live and with batched events (clients/conformance).
 */
class HelpersTest {

  private static final Path CONFORMANCE = Path.of("..", "conformance");

  private static List<Struct> lines(String name) throws IOException {
    List<Struct> out = new ArrayList<>();
    for (String line : Files.readAllLines(CONFORMANCE.resolve(name))) {
      if (!line.isBlank()) {
        Struct.Builder b = Struct.newBuilder();
        JsonFormat.parser().merge(line, b);
        out.add(b.build());
      }
    }
    return out;
  }

  private static List<String> strings(Value v) {
    List<String> out = new ArrayList<>();
    for (Value x : v.getListValue().getValuesList()) {
      out.add(x.getStringValue());
    }
    return out;
  }

  @Test
  void theComparatorGivesTheReferenceJudgesVerdicts() throws IOException {
    List<Struct> cases = lines("judge_cases.jsonl");
    assertTrue(cases.size() >= 1000, "only " + cases.size() + " cases");
    for (Struct c : cases) {
      Map<String, Value> r = c.getFieldsOrThrow("rules").getStructValue().getFieldsMap();
      Rules rules =
          new Rules(
              r.get("suit_order").getStringValue(),
              r.get("straights").getStringValue(),
              r.get("five_card_categories").getStringValue(),
              r.get("five_card_hands").getBoolValue(),
              r.get("lowest_straight_beats_straights").getBoolValue(),
              r.get("bomb").getBoolValue());
      boolean revolution = c.getFieldsOrThrow("revolution").getBoolValue();
      List<String> play = strings(c.getFieldsOrThrow("play"));
      Value table = c.getFieldsOrThrow("table");
      boolean legal = c.getFieldsOrThrow("legal").getBoolValue();
      Value combination = c.getFieldsOrThrow("combination");
      Optional<Rules.Combo> combo = rules.classify(play, revolution);
      String where = JsonFormat.printer().omittingInsignificantWhitespace().print(c);
      if (combination.hasNullValue()) {
        assertTrue(combo.isEmpty(), "classify " + where + ": " + combo);
      } else {
        Combination want = Combination.valueOf("COMBINATION_" + combination.getStringValue().toUpperCase());
        assertEquals(want, combo.map(Rules.Combo::kind).orElse(null), "classify " + where);
      }
      if (table.hasNullValue()) {
        assertEquals(legal, combo.isPresent(), "lead " + where);
      } else if (combo.isPresent()) {
        assertEquals(legal, rules.beats(play, strings(table), revolution), "beats " + where);
      }
    }
  }

  // -- the tracker ----------------------------------------------------------------------------

  /** One recorded message of a seat's stream. */
  private record Recorded(String stream, String kind, Message message) {}

  private static List<Recorded> recorded() throws IOException {
    List<Recorded> out = new ArrayList<>();
    JsonFormat.Printer printer = JsonFormat.printer();
    for (Struct line : lines("tracker_streams.jsonl")) {
      String kind = line.getFieldsOrThrow("kind").getStringValue();
      String json = printer.print(line.getFieldsOrThrow("message").getStructValue());
      Message.Builder b =
          switch (kind) {
            case "welcome" -> Welcome.newBuilder();
            case "snapshot" -> Snapshot.newBuilder();
            case "event" -> Event.newBuilder();
            case "prompt" -> TurnPrompt.newBuilder();
            default -> throw new IllegalArgumentException(kind);
          };
      JsonFormat.parser().merge(json, b);
      out.add(new Recorded(line.getFieldsOrThrow("stream").getStringValue(), kind, b.build()));
    }
    return out;
  }

  @Test
  void theTrackerHoldsThePublicStateOfEveryPrompt() throws IOException {
    Map<String, Tracker> trackers = new LinkedHashMap<>();
    int checked = 0;
    for (Recorded r : recorded()) {
      Tracker t = trackers.computeIfAbsent(r.stream(), s -> new Tracker());
      switch (r.kind()) {
        case "welcome" -> t.onWelcome((Welcome) r.message());
        case "snapshot" -> t.onSnapshot((Snapshot) r.message());
        case "event" -> t.onEvent((Event) r.message());
        default -> {
          TurnPrompt p = (TurnPrompt) r.message();
          assertNull(t.differsFrom(p), r.stream());
          checked++;
        }
      }
    }
    assertEquals(3, trackers.size());
    assertTrue(checked >= 100, checked + " prompts checked");
  }

  /**
   * A recorded stream as the referee would send it, in segments (one per Welcome: the
   * recordings include a reconnect drill), each a list of chunks sent one answer apart: up to
   * and including a prompt, or the segment's tail. Batched: the events go into the next
   * prompt, or into a batch at a hand's or the match's end; events still held when a segment
   * ends are lost with the stream, as the referee loses them.
   */
  private static List<List<List<PlayResponse>>> segments(List<Recorded> stream, boolean batched) {
    List<List<List<PlayResponse>>> segments = new ArrayList<>();
    List<PlayResponse> chunk = new ArrayList<>();
    List<Event> held = new ArrayList<>();
    for (Recorded r : stream) {
      switch (r.kind()) {
        case "welcome" -> {
          if (!segments.isEmpty()) {
            segments.get(segments.size() - 1).add(chunk);
          }
          segments.add(new ArrayList<>());
          chunk = new ArrayList<>();
          held.clear();
          chunk.add(PlayResponse.newBuilder().setWelcome((Welcome) r.message()).build());
        }
        case "snapshot" -> chunk.add(PlayResponse.newBuilder().setSnapshot((Snapshot) r.message()).build());
        case "event" -> {
          Event e = (Event) r.message();
          if (!batched) {
            chunk.add(PlayResponse.newBuilder().setEvent(e).build());
          } else {
            held.add(e);
            if (e.hasHandEnded() || e.hasMatchEnded()) {
              chunk.add(PlayResponse.newBuilder().setBatch(EventBatch.newBuilder().addAllEvents(held)).build());
              held.clear();
            }
          }
        }
        default -> {
          // A budget of a minute whatever the recorded deadline: the check, not the clock.
          TurnPrompt.Builder p = ((TurnPrompt) r.message()).toBuilder().clearDeadline().setTurnTimeMs(60_000);
          if (batched) {
            p.addAllEvents(held);
            held.clear();
          }
          chunk.add(PlayResponse.newBuilder().setPrompt(p).build());
          segments.get(segments.size() - 1).add(chunk);
          chunk = new ArrayList<>();
        }
      }
    }
    segments.get(segments.size() - 1).add(chunk);
    return segments;
  }

  /** A bot that checks its tracker against each prompt's state. */
  private static final class Checker extends TrackingBot {
    final List<String> mismatches = new CopyOnWriteArrayList<>();
    int checked;

    @Override
    public Choice choose(Prompt prompt) {
      String why = tracker().differsFrom(prompt.message());
      if (why != null) {
        mismatches.add(why);
      }
      checked++;
      return Fallback.of(prompt);
    }
  }

  private static void replayThroughTheRunner(boolean batched) throws Exception {
    Map<String, List<Recorded>> streams = new LinkedHashMap<>();
    for (Recorded r : recorded()) {
      streams.computeIfAbsent(r.stream(), s -> new ArrayList<>()).add(r);
    }
    for (Map.Entry<String, List<Recorded>> entry : streams.entrySet()) {
      List<List<List<PlayResponse>>> segments = segments(entry.getValue(), batched);
      long prompts = entry.getValue().stream().filter(r -> r.kind().equals("prompt")).count();
      Checker bot = new Checker();
      try (FakeReferee referee =
          new FakeReferee(
              (conn, req) -> {
                List<List<PlayResponse>> chunks = segments.get(conn.index);
                int next = conn.actions(); // the hello gets chunk 0, the n-th answer chunk n
                if (next < chunks.size()) {
                  conn.send(chunks.get(next).toArray(new PlayResponse[0]));
                }
                if (next >= chunks.size() - 1) {
                  if (conn.index < segments.size() - 1) {
                    conn.fail(Status.UNAVAILABLE.withDescription("the drill"));
                  } else {
                    conn.close();
                  }
                }
              })) {
        Outcome outcome =
            new BotRunner(bot, referee.channel, Options.builder().token("tok").batchEvents(batched).build())
                .log(line -> {})
                .play();
        assertTrue(outcome.ended().isPresent(), entry.getKey());
        assertEquals(segments.size(), referee.conns.size(), entry.getKey() + ": one stream per segment");
      }
      assertEquals(List.of(), bot.mismatches, entry.getKey());
      assertEquals(prompts, bot.checked, entry.getKey() + ": every prompt checked");
    }
  }

  @Test
  @Timeout(60)
  void theTrackerFollowsLiveEventsThroughTheRunner() throws Exception {
    replayThroughTheRunner(false);
  }

  @Test
  @Timeout(60)
  void theTrackerFollowsBatchedEventsThroughTheRunner() throws Exception {
    replayThroughTheRunner(true);
  }

  @Test
  void parsesCards() throws InvalidProtocolBufferException {
    assertEquals(List.of(6, 1), List.of(Rules.parseCard("9S")[0], Rules.parseCard("9S")[1]));
    assertEquals(7, Rules.parseCard("10h")[0]);
    assertEquals(3, Rules.parseCard("2♦")[1]);
    Rules bigTwo = new Rules("diamonds-low", "wrap-low", "ranked", true, false, false);
    assertEquals(List.of("3D", "3C", "3H", "3S"), bigTwo.sorted(List.of("3S", "3H", "3C", "3D"), false));
    assertTrue(bigTwo.beats(List.of("2S"), List.of("2H"), false));
    assertTrue(bigTwo.classify(List.of("9S", "9S"), false).isEmpty(), "a duplicate card");
    assertTrue(bigTwo.classify(List.of("XX"), false).isEmpty());
  }
}
