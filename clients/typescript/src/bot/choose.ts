/**
 * ======================================================================
 *  YOUR BOT'S LOGIC GOES HERE.
 * ======================================================================
 *
 * `choose` gets every prompt and returns the cards to play (e.g. ["9D", "9S"]) or PASS.
 * The prompt holds all you need: your hand, the legal plays (weakest first), whether
 * you may pass, the play on the table and the public state (card counts, cards played,
 * scores). Return quickly: past the deadline the library sends the fallback for you
 * (pass if allowed, else the weakest play). It may also be `async`.
 *
 * This sample plays uniformly at random among the legal plays, pass included when
 * allowed.
 */

import { Choice, PASS, Prompt } from "../lib";

export function choose(prompt: Prompt, random: () => number = Math.random): Choice {
  const options: Choice[] = prompt.legalPlays.map((play) => play.cards);
  if (prompt.canPass) options.push(PASS);
  if (options.length === 0) return PASS;
  return options[Math.floor(random() * options.length)] ?? PASS;
}
