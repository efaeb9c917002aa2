/**
 * ======================================================================
 *  YOUR BOT'S LOGIC GOES HERE.
 * ======================================================================
 *
 * `choose` gets every prompt and returns the cards to play (e.g. ["9D", "9S"]) or PASS.
 * The prompt holds your hand, the legal plays (weakest first; empty when a pass is the
 * only legal action), whether you may pass, the play on the table, the public state and
 * `prompt.budget.remainingMs()`. Past the budget the library sends the fallback for you
 * (pass if allowed, else the weakest play). The tracker (main.ts) follows the match.
 *
 * This sample plays uniformly at random among the legal plays, pass included when
 * allowed, except when an opponent is about to go out: then it plays its strongest play.
 */

import { Choice, classify, PASS, Prompt, Tracker } from "../lib";

export function choose(prompt: Prompt, tracker?: Tracker, random: () => number = Math.random): Choice {
  const plays = prompt.legalPlays.map((play) => play.cards);
  if (plays.length === 0) return PASS; // a pass is the only legal action
  if (tracker !== undefined && [0, 1, 2, 3].some((s) => s !== prompt.seat && tracker.cardsLeft(s) === 1)) {
    const strength = (cards: readonly string[]) => cards.length * 2 ** 24 + (classify(tracker.rules, cards, tracker.revolution)?.key ?? -1);
    return plays.reduce((best, p) => (strength(p) > strength(best) ? p : best));
  }
  const options: Choice[] = [...plays];
  if (prompt.canPass) options.push(PASS);
  return options[Math.floor(random() * options.length)] ?? PASS;
}
