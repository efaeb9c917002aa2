import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { choose } from "../src/bot/choose";
import { parsePrompt, PASS } from "../src/lib";
import { TurnPrompt } from "../src/gen/pusoy/referee/v1/play_service";

const prompt = (canPass: boolean, legal: string[][]) =>
  parsePrompt(
    TurnPrompt.fromPartial({
      turnId: 1n,
      hand: ["3C", "4D", "5S"],
      legalPlays: legal.map((cards) => ({ cards, combination: 1 })),
      canPass,
    }),
  );

describe("the sample bot", () => {
  it("picks uniformly among the legal plays and the pass", () => {
    const p = prompt(true, [["3C"], ["4D"], ["5S"]]);
    const seen = [0, 0.25, 0.5, 0.75, 0.999].map((r) => choose(p, undefined, () => r));
    assert.deepEqual(seen, [["3C"], ["4D"], ["5S"], PASS, PASS]);
  });

  it("never passes when it must play", () => {
    const p = prompt(false, [["3C"], ["4D"]]);
    for (let i = 0; i < 50; i++) assert.notEqual(choose(p), PASS);
  });

  it("passes when nothing is listed", () => {
    assert.equal(choose(prompt(false, [])), PASS);
  });
});
