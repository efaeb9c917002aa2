/**
 * The sample bot's program: `bot --address A --token T [--misbehave]`.
 * The logic itself is in choose.ts.
 */

import { Choice, main, Prompt, TrackingBot } from "../lib";
import { choose } from "./choose";

class SampleBot extends TrackingBot {
  name = "typescript-sample";

  choose(prompt: Prompt): Choice {
    return choose(prompt, this.tracker);
  }
}

main(new SampleBot()).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
