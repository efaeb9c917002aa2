package io.pusoyreferee.client;

import java.io.PrintStream;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The {@code main} of a bot: reads the kits' common flags and environment ({@link
 * Options#parse}), plays the match and turns the outcome into the exit code of docs/kits.md:
 * 0 the match ended (also while the bot was away), 1 an internal error, 2 the referee refused
 * the seat, 3 it could not be reached within the reconnect window, 4 the stream failed in a
 * way a reconnect cannot fix, 64 a usage error.
 *
 * <pre>{@code
 * public static void main(String[] args) {
 *   BotLauncher.main(args, MyBot::new);
 * }
 * }</pre>
 */
public final class BotLauncher {

  public static final int EXIT_OK = 0;
  public static final int EXIT_ERROR = 1;
  public static final int EXIT_REFUSED = 2;
  public static final int EXIT_UNREACHABLE = 3;
  public static final int EXIT_RPC = 4;
  public static final int EXIT_USAGE = 64;

  private BotLauncher() {}

  /** Runs a bot from {@code main} and exits the JVM with the outcome's code. */
  public static void main(String[] args, Supplier<? extends Bot> factory) {
    System.exit(run(args, System.getenv(), options -> factory.get(), System.out, System.err));
  }

  /**
   * Runs a bot made from the parsed options (so that a bot may read them); returns the
   * process exit code.
   */
  public static int run(
      String[] args,
      Map<String, String> env,
      Function<Options, ? extends Bot> factory,
      PrintStream out,
      PrintStream err) {
    Options options;
    try {
      options = Options.parse(args, env);
    } catch (UsageException e) {
      err.println("error: " + e.getMessage());
      err.println(Options.usage());
      return EXIT_USAGE;
    }
    if (options == null) {
      out.println(Options.usage());
      return EXIT_OK;
    }
    String name = "bot";
    try {
      Bot bot = factory.apply(options);
      if (options.misbehave()) {
        bot = new MisbehavingBot(bot);
      }
      name = bot.name();
      Outcome outcome = BotRunner.run(bot, options);
      out.println(name + ": " + outcome.summary());
      return EXIT_OK;
    } catch (UsageException e) {
      err.println(name + ": error: " + e.getMessage());
      return EXIT_USAGE;
    } catch (RefusedException e) {
      err.println(name + ": refused: " + e.getMessage());
      return EXIT_REFUSED;
    } catch (UnreachableException e) {
      err.println(name + ": " + e.getMessage());
      return EXIT_UNREACHABLE;
    } catch (RpcFailedException e) {
      err.println(name + ": " + e.getMessage());
      return EXIT_RPC;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println(name + ": interrupted");
      return EXIT_ERROR;
    } catch (RuntimeException | Error e) {
      err.println(name + ": internal error: " + e);
      e.printStackTrace(err);
      return EXIT_ERROR;
    }
  }
}
