import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { RefusalReason, TurnPrompt } from "../src/gen/pusoy/referee/v1/play_service";
import { RejectionReason } from "../src/gen/pusoy/referee/v1/common";
import { Bot, BotRefused, Choice, decide, parsePrompt, PASS, Prompt, RefereeUnreachable, Rejection, run } from "../src/lib";
import { FakeReferee, matchEnded, promptMessage, snapshot, Stream, welcome } from "./fake_referee";

class Scripted extends Bot {
  name = "scripted";
  readonly prompts: Prompt[] = [];
  readonly rejections: Rejection[] = [];
  readonly events: string[] = [];
  constructor(private readonly pick: (p: Prompt) => Choice | Promise<Choice> = (p) => p.legalPlays[0]?.cards ?? PASS) {
    super();
  }
  choose(prompt: Prompt): Choice | Promise<Choice> {
    this.prompts.push(prompt);
    return this.pick(prompt);
  }
  onRejected(prompt: Prompt, rejection: Rejection): Choice {
    this.rejections.push(rejection);
    return super.onRejected(prompt, rejection) as Choice;
  }
  onWelcome(): void {
    this.events.push("welcome");
  }
  onSnapshot(): void {
    this.events.push("snapshot");
  }
}

const quiet = () => {};

function promptFor(deadlineInMs: number, canPass = true): Prompt {
  const msg = promptMessage(1n, ["3C", "4D"], [["3C"], ["4D"]], { canPass, deadlineInMs });
  if (msg.kind?.$case !== "prompt") throw new Error("not a prompt");
  return parsePrompt(TurnPrompt.fromPartial(msg.kind.value ?? {}));
}

/** The action of a request as [turn, "pass" | cards]. */
async function nextAction(stream: Stream): Promise<[bigint, string | string[]]> {
  const req = await stream.next();
  assert.equal(req?.kind?.$case, "action", `expected an action, got ${JSON.stringify(req?.kind?.$case)}`);
  const action = req.kind.value;
  return [action.turnId, action.kind?.$case === "play" ? action.kind.value.cards : "pass"];
}

async function expectHello(stream: Stream, token = "tok"): Promise<void> {
  const req = await stream.next();
  assert.equal(req?.kind?.$case, "hello");
  assert.equal(req.kind.value.token, token);
  assert.equal(req.kind.value.protocolVersion, 1);
  assert.equal(req.kind.value.wantLegalPlays, true);
}

describe("decide", () => {
  const bot = (pick: (p: Prompt) => Choice | Promise<Choice>) => new Scripted(pick);

  it("takes the bot's choice when it is in time", async () => {
    assert.deepEqual(await decide(bot(() => ["4D"]), promptFor(1000)), ["4D"]);
    assert.deepEqual(await decide(bot(async () => ["4D"]), promptFor(1000)), ["4D"]);
  });

  it("sends the fallback when the bot's logic runs past the deadline", async () => {
    const slow = bot(() => new Promise<Choice>((resolve) => setTimeout(() => resolve(["4D"]), 2000)));
    const started = Date.now();
    assert.equal(await decide(slow, promptFor(200), undefined, 50), PASS);
    const took = Date.now() - started;
    assert.ok(took >= 100 && took < 1500, `answered after ${took} ms`);
    assert.deepEqual(await decide(slow, promptFor(-100, false), undefined, 50), ["3C"]);
  });

  it("sends the fallback when the bot's logic throws", async () => {
    const broken = bot(() => {
      throw new Error("bug");
    });
    assert.equal(await decide(broken, promptFor(1000)), PASS);
    assert.deepEqual(await decide(bot(async () => Promise.reject(new Error("bug"))), promptFor(1000, false)), ["3C"]);
  });
});

describe("run against a scripted referee", () => {
  const referees: FakeReferee[] = [];
  after(async () => {
    await Promise.all(referees.map((r) => r.stop()));
  });
  async function referee(...scripts: ((s: Stream) => Promise<void>)[]): Promise<FakeReferee> {
    const r = new FakeReferee(scripts);
    referees.push(r);
    await r.start();
    return r;
  }

  it("says hello, answers prompts, recovers from a rejection and ends with the match", async () => {
    const seen: (string | string[])[] = [];
    const ref = await referee(async (s) => {
      await expectHello(s);
      s.send(welcome());
      s.send(snapshot());
      s.send(promptMessage(5n, ["3C", "4D"], [["3C"], ["4D"]], { canPass: false }));
      const [turn, first] = await nextAction(s);
      assert.equal(turn, 5n);
      seen.push(first);
      s.send({
        kind: {
          $case: "result",
          value: { turnId: 5n, accepted: false, reason: RejectionReason.REJECTION_REASON_DOES_NOT_BEAT, attemptsLeft: 2 },
        },
      });
      const [again, second] = await nextAction(s);
      assert.equal(again, 5n);
      seen.push(second);
      s.send({ kind: { $case: "result", value: { turnId: 5n, accepted: true } } });
      s.send(matchEnded());
      s.end();
    });
    const bot = new Scripted((p) => p.legalPlays[1]!.cards);
    const outcome = await run(bot, { address: ref.address, token: "tok", log: quiet });
    assert.deepEqual(ref.errors, []);
    assert.deepEqual(seen, [["4D"], ["3C"]], "the bot's choice, then the fallback (weakest play)");
    assert.equal(bot.rejections[0]?.reasonName, "REJECTION_REASON_DOES_NOT_BEAT");
    assert.deepEqual(bot.events, ["welcome", "snapshot"]);
    assert.deepEqual([outcome.seat, outcome.matchId, outcome.place], [0, "m1", 2]);
  });

  it("misbehaves with a card not in hand, then recovers through the fallback", async () => {
    const seen: (string | string[])[] = [];
    const ref = await referee(async (s) => {
      await expectHello(s);
      s.send(welcome());
      s.send(promptMessage(1n, ["3C", "4D"], [["3C"], ["4D"]], { canPass: true }));
      seen.push((await nextAction(s))[1]);
      s.send({
        kind: {
          $case: "result",
          value: { turnId: 1n, accepted: false, reason: RejectionReason.REJECTION_REASON_CARD_NOT_IN_HAND, attemptsLeft: 2 },
        },
      });
      seen.push((await nextAction(s))[1]);
      s.send({ kind: { $case: "result", value: { turnId: 1n, accepted: true } } });
      s.send(promptMessage(2n, ["3C", "4D"], [["4D"]], { canPass: false }));
      seen.push((await nextAction(s))[1]);
      s.send(matchEnded());
      s.end();
    });
    await run(new Scripted(), { address: ref.address, token: "tok", misbehave: true, log: quiet });
    assert.deepEqual(ref.errors, []);
    assert.deepEqual(seen, [["3S"], "pass", ["4D"]]);
  });

  it("reconnects with the same token when the stream drops, and resumes", async () => {
    const ref = await referee(
      async (s) => {
        await expectHello(s, "seat-token");
        s.send(welcome());
        s.send(promptMessage(1n, ["3C"], [["3C"]]));
        await nextAction(s);
        s.end(); // dropped before match_ended
      },
      async (s) => {
        await expectHello(s, "seat-token");
        s.send({ kind: { $case: "refusal", value: { reason: RefusalReason.REFUSAL_REASON_SEAT_TAKEN } } });
        s.end();
      },
      async (s) => {
        await expectHello(s, "seat-token");
        s.send(welcome(true));
        s.send(promptMessage(2n, ["4D"], [["4D"]]));
        assert.deepEqual(await nextAction(s), [2n, ["4D"]]);
        s.send(matchEnded());
        s.end();
      },
    );
    const lines: string[] = [];
    const outcome = await run(new Scripted(), { address: ref.address, token: "seat-token", log: (l) => lines.push(l) });
    assert.deepEqual(ref.errors, []);
    assert.equal(outcome.place, 2);
    assert.ok(lines.some((l) => l.includes("reconnecting")), lines.join("\n"));
  });

  it("ends cleanly when the match ended while it was away", async () => {
    const ref = await referee(
      async (s) => {
        await expectHello(s);
        s.send(welcome());
        s.end();
      },
      async (s) => {
        await expectHello(s);
        s.send({ kind: { $case: "refusal", value: { reason: RefusalReason.REFUSAL_REASON_MATCH_OVER } } });
        s.end();
      },
    );
    const outcome = await run(new Scripted(), { address: ref.address, token: "tok", log: quiet });
    assert.equal(outcome.ended, undefined);
    assert.equal(outcome.place, 0);
  });

  it("gives up on a refusal", async () => {
    const ref = await referee(async (s) => {
      await expectHello(s);
      s.send({ kind: { $case: "refusal", value: { reason: RefusalReason.REFUSAL_REASON_BAD_TOKEN, message: "no seat" } } });
      s.end();
    });
    await assert.rejects(run(new Scripted(), { address: ref.address, token: "tok", log: quiet }), (err: unknown) => {
      assert.ok(err instanceof BotRefused);
      assert.equal(err.reasonName, "REFUSAL_REASON_BAD_TOKEN");
      return true;
    });
  });

  it("gives up when the referee cannot be reached within the window", async () => {
    const ref = await referee();
    const address = ref.address;
    await ref.stop();
    const started = Date.now();
    await assert.rejects(
      run(new Scripted(), { address, token: "tok", reconnectWindowMs: 300, log: quiet }),
      RefereeUnreachable,
    );
    assert.ok(Date.now() - started < 10_000);
  });
});
