/**
 * Command-line entry for a bot (docs/kits.md, section 7): the flags or PUSOY_* variables,
 * the run, and the exit code.
 */

import { Bot } from "./bot";
import { Options, parseCommandLine, USAGE, UsageError } from "./options";
import { Refused, RpcFailed, run, Unreachable } from "./runner";

/** Exit codes of {@link main}. */
export const EXIT = { OK: 0, ERROR: 1, REFUSED: 2, UNREACHABLE: 3, RPC: 4, USAGE: 64 } as const;

export { parseCommandLine, UsageError };

/** Runs `bot` as a program; resolves with the process exit code. */
export async function main(
  bot: Bot,
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let options: Options;
  try {
    options = parseCommandLine(argv, env);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (!(err instanceof UsageError)) throw err;
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
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof Refused) {
      process.stderr.write(`${bot.name}: refused: ${message}\n`);
      return EXIT.REFUSED;
    }
    if (err instanceof Unreachable) {
      process.stderr.write(`${bot.name}: ${message}\n`);
      return EXIT.UNREACHABLE;
    }
    if (err instanceof RpcFailed) {
      process.stderr.write(`${bot.name}: the stream failed: ${message}\n`);
      return EXIT.RPC;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`${bot.name}: ${message}\n`);
      return EXIT.USAGE;
    }
    process.stderr.write(`${bot.name}: internal error: ${err instanceof Error ? (err.stack ?? message) : message}\n`);
    return EXIT.ERROR;
  }
}
