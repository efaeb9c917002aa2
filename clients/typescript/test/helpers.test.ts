import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Event } from "../src/gen/pusoy/referee/v1/common";
import { Snapshot, TurnPrompt, Welcome } from "../src/gen/pusoy/referee/v1/play_service";
import { beats, classify, Rules, Tracker } from "../src/lib";

// dist/test -> the repository's clients/conformance
const DATA = join(__dirname, "..", "..", "..", "conformance");
const lines = (name: string) => readFileSync(join(DATA, name), "utf8").split("\n").filter((l) => l !== "");

describe("the comparator", () => {
  it("gives the reference judge's verdicts", () => {
    const cases = lines("judge_cases.jsonl").map((l) => JSON.parse(l));
    assert.ok(cases.length > 1000);
    for (const c of cases) {
      const r = c.rules;
      const rules: Rules = {
        suitOrder: r.suit_order,
        straights: r.straights,
        fiveCardCategories: r.five_card_categories,
        fiveCardHands: r.five_card_hands,
        lowestStraightBeatsStraights: r.lowest_straight_beats_straights,
        bomb: r.bomb,
      };
      const combo = classify(rules, c.play, c.revolution);
      assert.equal(combo?.kind ?? null, c.combination, JSON.stringify(c));
      if (c.table !== null && combo !== undefined) assert.equal(beats(rules, c.play, c.table, c.revolution), c.legal, JSON.stringify(c));
      if (c.table === null) assert.equal(combo !== undefined, c.legal, JSON.stringify(c));
    }
  });
});

describe("the tracker", () => {
  it("matches the public state of every prompt in recorded streams", () => {
    const trackers = new Map<string, Tracker>();
    let checked = 0;
    for (const line of lines("tracker_streams.jsonl")) {
      const { stream, kind, message } = JSON.parse(line);
      let t = trackers.get(stream);
      if (t === undefined) trackers.set(stream, (t = new Tracker()));
      if (kind === "welcome") t.onWelcome(Welcome.fromJSON(message));
      else if (kind === "snapshot") t.onSnapshot(Snapshot.fromJSON(message));
      else if (kind === "event") t.onEvent(Event.fromJSON(message));
      else {
        const p = TurnPrompt.fromJSON(message);
        const st = p.state!;
        const where = `${stream} turn ${p.turnId}`;
        assert.equal(t.handNumber, st.handNumber, where);
        assert.deepEqual(t.hand, p.hand, where);
        assert.deepEqual(t.cardCounts, st.cardCounts, where);
        assert.deepEqual(t.playedCards, st.playedCards, where);
        assert.deepEqual(t.table, st.table?.cards ?? [], where);
        assert.equal(t.tableSeat, st.tableSeat, where);
        assert.deepEqual(t.lockedOut, st.lockedOut, where);
        assert.equal(t.revolution, st.revolution, where);
        assert.deepEqual(t.trick, st.trick.map((x) => ({ seat: x.seat, cards: x.pass ? [] : (x.play?.cards ?? []) })), where);
        assert.deepEqual(t.totals, st.totals, where);
        checked++;
      }
    }
    assert.equal(trackers.size, 3);
    assert.ok(checked > 100);
  });
});
