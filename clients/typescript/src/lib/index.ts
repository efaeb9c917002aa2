/**
 * pusoy-client: a small TypeScript library for pusoy-referee bots.
 *
 * Subclass {@link Bot}, write `choose`, and hand the bot to {@link main} (a program) or
 * {@link run} (a Promise). The runner connects, says hello with the seat token, answers
 * prompts before their deadline, answers again after a rejection, and reconnects with
 * the same token after a dropped stream.
 *
 * ```ts
 * class Lowest extends Bot {
 *   choose(prompt: Prompt): Choice {
 *     return prompt.legalPlays[0]?.cards ?? PASS;
 *   }
 * }
 * main(new Lowest()).then((code) => process.exit(code));
 * ```
 */

export { Bot, MatchOutcome, placeOf } from "./bot";
export { EXIT, main, parseCommandLine, UsageError } from "./cli";
export {
  actionFor,
  answerBy,
  cardNotInHand,
  Choice,
  DECK,
  fallback,
  helloRequest,
  LegalPlay,
  Misbehaviour,
  parsePrompt,
  parseRejection,
  PASS,
  passAction,
  playAction,
  Prompt,
  PROTOCOL_VERSION,
  Rejection,
} from "./protocol";
export { BotRefused, decide, DEADLINE_MARGIN_MS, RECONNECT_WINDOW_MS, RefereeUnreachable, run, RunOptions } from "./runner";

/** The generated protocol messages, for bots that want the raw events. */
export * as pb from "./pb";
