import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Combination, RejectionReason } from "../src/gen/pusoy/referee/v1/common";
import { ActionResult, PlayRequest, PlayResponse, TurnPrompt } from "../src/gen/pusoy/referee/v1/play_service";
import {
  actionFor,
  Budget,
  cardNotInHand,
  DECK,
  fallback,
  helloRequest,
  Misbehaviour,
  parsePrompt,
  parseRejection,
  PASS,
  passAction,
  playAction,
  Prompt,
  PROTOCOL_VERSION,
  RAISED_MARKER,
  raisedLine,
} from "../src/lib";

/** A TurnPrompt as the referee would send it, through the wire and back. */
function wirePrompt(overrides: Partial<TurnPrompt> = {}): TurnPrompt {
  const response = PlayResponse.fromPartial({
    kind: {
      $case: "prompt",
      value: {
        turnId: 42n,
        seat: 2,
        deadline: new Date("2030-01-01T00:00:05.000Z"),
        turnTimeMs: 5000,
        timeBankMs: 1000,
        hand: ["3C", "5D", "9D", "9S", "2S"],
        legalPlays: [
          { cards: ["9D"], combination: Combination.COMBINATION_SINGLE },
          { cards: ["9D", "9S"], combination: Combination.COMBINATION_PAIR },
        ],
        canPass: true,
        attemptsLeft: 3,
        isLead: false,
        state: {
          matchId: "m-1",
          handNumber: 4,
          turn: 2,
          table: { cards: ["8H"], combination: Combination.COMBINATION_SINGLE },
          tableSeat: 1,
          cardCounts: [7, 12, 5, 13],
          playedCards: ["3D", "8H"],
        },
        ...overrides,
      },
    },
  });
  const decoded = PlayResponse.decode(PlayResponse.encode(response).finish());
  assert.equal(decoded.kind?.$case, "prompt");
  return decoded.kind.value as TurnPrompt;
}

function prompt(overrides: Partial<TurnPrompt> = {}): Prompt {
  return parsePrompt(wirePrompt(overrides));
}

describe("parsePrompt", () => {
  it("turns a prompt from the wire into the library's view", () => {
    const p = prompt();
    assert.equal(p.turnId, 42n);
    assert.equal(p.seat, 2);
    assert.equal(p.handNumber, 4);
    assert.deepEqual(p.deadline, new Date("2030-01-01T00:00:05.000Z"));
    assert.equal(p.turnTimeMs, 5000);
    assert.equal(p.timeBankMs, 1000);
    assert.deepEqual(p.hand, ["3C", "5D", "9D", "9S", "2S"]);
    assert.deepEqual(
      p.legalPlays.map((play) => [play.cards, play.combinationName]),
      [
        [["9D"], "COMBINATION_SINGLE"],
        [["9D", "9S"], "COMBINATION_PAIR"],
      ],
    );
    assert.equal(p.canPass, true);
    assert.equal(p.isLead, false);
    assert.equal(p.attemptsLeft, 3);
    assert.deepEqual(p.table?.cards, ["8H"]);
    assert.equal(p.state.tableSeat, 1);
    assert.equal(p.state.turn, 2);
    assert.deepEqual(p.state.cardCounts, [7, 12, 5, 13]);
    assert.deepEqual(p.state.playedCards, ["3D", "8H"]);
  });

  it("has no table on a lead and survives a prompt without state", () => {
    const lead = parsePrompt(TurnPrompt.fromPartial({ turnId: 1n, hand: ["3C"], isLead: true }));
    assert.equal(lead.table, undefined);
    assert.equal(lead.handNumber, 0);
    assert.equal(lead.deadline, undefined);
    assert.ok(lead.budget.remainingMs() > 1e9, "a prompt built by hand has no limit");
  });
});

describe("Budget", () => {
  const at = 1_000_000_000n; // a monotonic reading, in ns
  const wall = Date.parse("2030-01-01T00:00:00.000Z");
  const ms = (b: Budget) => Number(b.deadlineNs - at) / 1e6;

  it("is min(deadline, receipt + turn time) + bank - margin", () => {
    const msg = { deadline: new Date(wall + 2000), turnTimeMs: 2000, timeBankMs: 500 };
    assert.equal(ms(Budget.forPrompt(msg, at, wall, 50)), 2450);
    assert.equal(ms(Budget.forPrompt(msg, at, wall, 50, false)), 1950);
  });

  it("trusts the turn time over a deadline far ahead (our clock behind)", () => {
    assert.equal(ms(Budget.forPrompt({ deadline: new Date(wall + 60_000), turnTimeMs: 300, timeBankMs: 0 }, at, wall, 50)), 250);
  });

  it("keeps only the bank when the deadline is past (our clock ahead)", () => {
    assert.equal(ms(Budget.forPrompt({ deadline: new Date(wall - 5000), turnTimeMs: 1000, timeBankMs: 500 }, at, wall, 50)), 450);
  });

  it("uses the referee's default turn time when the prompt has none", () => {
    assert.equal(ms(Budget.forPrompt({ deadline: undefined, turnTimeMs: 0, timeBankMs: 0 }, at, wall, 50)), 4950);
  });
});

describe("actions", () => {
  const roundTrip = (req: PlayRequest) => PlayRequest.decode(PlayRequest.encode(req).finish());

  it("builds a play action naming the turn and the cards", () => {
    const req = roundTrip(playAction(42n, ["9D", "9S"]));
    assert.equal(req.kind?.$case, "action");
    const action = req.kind.value;
    assert.equal(action.turnId, 42n);
    assert.deepEqual(action.kind, { $case: "play", value: { cards: ["9D", "9S"] } });
  });

  it("builds a pass action", () => {
    const req = roundTrip(passAction(7n));
    assert.equal(req.kind?.$case, "action");
    assert.equal(req.kind.value.turnId, 7n);
    assert.deepEqual(req.kind.value.kind, { $case: "pass", value: {} });
  });

  it("sends PASS and an empty card list as a pass, cards as a play", () => {
    assert.deepEqual(actionFor(3n, PASS), passAction(3n));
    assert.deepEqual(actionFor(3n, []), passAction(3n));
    assert.deepEqual(actionFor(3n, ["3C"]), playAction(3n, ["3C"]));
  });

  it("says hello with the protocol version, the token and the name", () => {
    const req = roundTrip(helloRequest("secret", "my-bot"));
    assert.equal(req.kind?.$case, "hello");
    assert.deepEqual(req.kind.value, { protocolVersion: 1, token: "secret", wantLegalPlays: true, botName: "my-bot", batchEvents: false });
    assert.equal(PROTOCOL_VERSION, 1);
  });

  it("asks for batched events when told to", () => {
    const req = roundTrip(helloRequest("secret", "my-bot", true, true));
    assert.equal(req.kind?.$case, "hello");
    assert.equal(req.kind.value.batchEvents, true);
  });
});

describe("fallback", () => {
  it("passes when a pass is allowed", () => {
    assert.equal(fallback(prompt({ canPass: true })), PASS);
  });

  it("plays the weakest legal play when it must play", () => {
    assert.deepEqual(fallback(prompt({ canPass: false, isLead: true })), ["9D"]);
  });

  it("plays the opening card, else the lowest card, when no legal plays were listed", () => {
    assert.deepEqual(fallback(prompt({ canPass: false, legalPlays: [] })), ["3C"]);
    const opening = wirePrompt({ canPass: false, legalPlays: [] });
    opening.state!.mustInclude = "9S";
    assert.deepEqual(fallback(parsePrompt(opening)), ["9S"]);
  });
});

describe("misbehaviour", () => {
  it("picks a card of the deck that is not in the hand", () => {
    assert.equal(DECK.length, 52);
    assert.equal(new Set(DECK).size, 52);
    assert.equal(cardNotInHand(["3C", "3S"]), "3H");
    assert.equal(cardNotInHand(["5D"]), "3C");
    assert.equal(cardNotInHand(["3c", "3s", "3h", "3d"]), "4C");
    const hand = DECK.slice(0, 51);
    assert.equal(cardNotInHand(hand), "2D");
    assert.throws(() => cardNotInHand(DECK));
  });

  it("sends one bad card as the first answer of each hand only", () => {
    const misbehaviour = new Misbehaviour();
    const first = prompt({ hand: ["3C", "3S", "4D"] });
    const bad = misbehaviour.choose(first);
    assert.deepEqual(bad, ["3H"]);
    assert.ok(bad !== null && bad !== undefined && !first.hand.includes(bad[0]!));
    assert.equal(misbehaviour.choose(first), undefined, "the same hand: play normally");
    const nextHand = parsePrompt({ ...wirePrompt(), state: { ...wirePrompt().state!, handNumber: 5 } });
    assert.deepEqual(misbehaviour.choose(nextHand), ["3S"]);
    assert.equal(misbehaviour.choose(nextHand), undefined);
  });
});

describe("parseRejection", () => {
  it("names the reason", () => {
    const rejection = parseRejection(
      ActionResult.fromPartial({
        turnId: 9n,
        accepted: false,
        reason: RejectionReason.REJECTION_REASON_CARD_NOT_IN_HAND,
        message: "not in your hand: 3H",
        attemptsLeft: 2,
      }),
    );
    assert.equal(rejection.reasonName, "REJECTION_REASON_CARD_NOT_IN_HAND");
    assert.equal(rejection.attemptsLeft, 2);
    assert.equal(rejection.turnId, 9n);
  });
});

describe("the raised marker (docs/kits.md, section 5)", () => {
  it("is one line naming the turn, the call and what was thrown", () => {
    assert.equal(RAISED_MARKER, "PUSOY_BOT_RAISED");
    assert.equal(
      raisedLine(14n, "choose", new RangeError("out of range")),
      "PUSOY_BOT_RAISED turn=14 call=choose error=RangeError: out of range",
    );
    assert.equal(raisedLine(3n, "on_rejected", new Error("")), "PUSOY_BOT_RAISED turn=3 call=on_rejected error=Error");
    assert.equal(raisedLine(2n, "choose", "a string"), "PUSOY_BOT_RAISED turn=2 call=choose error=thrown: a string");
  });

  it("has no control character and keeps at most 200 characters of the error", () => {
    const line = raisedLine(1n, "choose", new Error("x\ny\r\tz\u2028" + "w".repeat(500)));
    assert.ok(!/[\n\r\t\u2028]/.test(line), line);
    assert.ok(line.startsWith("PUSOY_BOT_RAISED turn=1 call=choose error=Error: x y  z "), line);
    assert.equal(line.split(" error=")[1]!.length, 200);
  });
});
