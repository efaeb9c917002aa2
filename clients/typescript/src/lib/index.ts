/**
 * pusoy-client: a small TypeScript library for pusoy-referee bots (the contract:
 * docs/kits.md).
 *
 * Subclass {@link Bot}, write `choose`, and hand the bot to {@link main} (a program) or
 * {@link run} (a Promise). The stream runs in a worker thread; the bot's code runs on the
 * main thread, one call at a time; the fallback goes out when `choose` overruns
 * `prompt.budget`; rejections get a second answer; a dropped stream is reconnected.
 *
 * ```ts
 * class Lowest extends Bot {
 *   choose(prompt: Prompt): Choice {
 *     return prompt.legalPlays[0]?.cards ?? PASS; // empty: a pass is the only legal action
 *   }
 * }
 * main(new Lowest()).then((code) => process.exit(code));
 * ```
 */

export { Bot, MatchOutcome, Outcome, placeOf } from "./bot";
export { EXIT, main } from "./cli";
export { Options, parseCommandLine, RECONNECT_WINDOW_MS, SAFETY_MARGIN_MS, UsageError } from "./options";
export {
  actionFor,
  asCards,
  Budget,
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
  RAISED_MARKER,
  raisedLine,
  Rejection,
} from "./protocol";
export { beats, cardKey, classify, Combo, DEFAULT_RULES, parseCard, Rules, rulesFrom, sortCards } from "./rules";
export { Refused, RpcFailed, run, Unreachable } from "./runner";
export { Tracker, TrackingBot, TrickEntry } from "./tracker";

/** The generated protocol messages, for bots that want the raw events. */
export * as pb from "./pb";
