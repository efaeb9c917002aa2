/**
 * The sample bot's program: `bot --address A --token T [--misbehave]`.
 * The logic itself is in choose.ts.
 */

import { Bot, Choice, main, Prompt } from "../lib";
import { choose } from "./choose";

class SampleBot extends Bot {
  name = "typescript-random";

  choose(prompt: Prompt): Choice {
    return choose(prompt);
  }
}

main(new SampleBot()).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
