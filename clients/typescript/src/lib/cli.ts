/**
 * Command-line entry for a bot: `--address A --token T [--misbehave]`, or the
 * environment variables PUSOY_ADDRESS, PUSOY_TOKEN and PUSOY_MISBEHAVE=1.
 */

import { parseArgs } from "node:util";
import { Bot } from "./bot";
import { BotRefused, RefereeUnreachable, run, RunOptions } from "./runner";

/** Exit codes of {@link main}. */
export const EXIT = { OK: 0, ERROR: 1, REFUSED: 2, UNREACHABLE: 3, USAGE: 64 } as const;

const DEFAULT_ADDRESS = "127.0.0.1:50051";

const USAGE = `usage: bot [--address HOST:PORT] [--token TOKEN] [--misbehave]

  --address    the referee (default: $PUSOY_ADDRESS, else ${DEFAULT_ADDRESS})
  --token      the seat's secret token (default: $PUSOY_TOKEN)
  --misbehave  send a card not in hand as the first answer of each hand, to
               check that the bot recovers (default: $PUSOY_MISBEHAVE=1)

PUSOY_DEBUG=1 also logs every message received to stderr.`;

/** Reads the command line and the environment into run options; throws on bad usage. */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): RunOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      address: { type: "string" },
      token: { type: "string" },
      misbehave: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) throw new UsageError("");
  const token = values.token ?? env.PUSOY_TOKEN ?? "";
  if (token === "") throw new UsageError("a seat token is needed: --token or PUSOY_TOKEN");
  const envMisbehave = isOn(env.PUSOY_MISBEHAVE);
  return {
    address: values.address ?? (env.PUSOY_ADDRESS || DEFAULT_ADDRESS),
    token,
    misbehave: values.misbehave ?? envMisbehave,
    debug: isOn(env.PUSOY_DEBUG),
  };
}

function isOn(value: string | undefined): boolean {
  return ["1", "true", "yes"].includes((value ?? "").toLowerCase());
}

export class UsageError extends Error {}

/** Runs `bot` as a program; resolves with the process exit code. */
export async function main(
  bot: Bot,
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let options: RunOptions;
  try {
    options = parseCommandLine(argv, env);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (message !== "") process.stderr.write(`${bot.name}: ${message}\n`);
    process.stderr.write(`${USAGE}\n`);
    return message === "" ? EXIT.OK : EXIT.USAGE;
  }
  try {
    const outcome = await run(bot, options);
    const place = outcome.place > 0 ? `placed ${outcome.place}` : "place unknown";
    process.stdout.write(`${bot.name}: match ${outcome.matchId} over, seat ${outcome.seat} ${place}\n`);
    return EXIT.OK;
  } catch (err) {
    if (err instanceof BotRefused) {
      process.stderr.write(`${bot.name}: refused: ${err.message}\n`);
      return EXIT.REFUSED;
    }
    if (err instanceof RefereeUnreachable) {
      process.stderr.write(`${bot.name}: ${err.message}\n`);
      return EXIT.UNREACHABLE;
    }
    process.stderr.write(`${bot.name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return EXIT.ERROR;
  }
}
