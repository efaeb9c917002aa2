package io.pusoyreferee.client;

import io.grpc.StatusRuntimeException;
import java.io.PrintStream;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The command line of a bot: {@code --address A --token T [--misbehave]}, or the environment
 * variables PUSOY_ADDRESS, PUSOY_TOKEN and PUSOY_MISBEHAVE=1 (the referee's {@code match}
 * command sets the first two).
 *
 * <p>Exit codes: 0 the match ended; 2 the referee refused the seat; 3 the referee could not be
 * reached; 4 the stream failed in a way a reconnect cannot fix; 64 bad command line.
 */
public final class BotLauncher {

  public static final String DEFAULT_ADDRESS = "127.0.0.1:50051";

  public static final int EXIT_OK = 0;
  public static final int EXIT_REFUSED = 2;
  public static final int EXIT_UNREACHABLE = 3;
  public static final int EXIT_STREAM_FAILED = 4;
  public static final int EXIT_USAGE = 64;

  private BotLauncher() {}

  /** What the command line asks for. */
  public record Options(String address, String token, boolean misbehave) {}

  /** A bad command line. */
  public static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    public UsageException(String message) {
      super(message);
    }
  }

  /** Runs a bot from {@code main} and exits the JVM with the outcome's code. */
  public static void main(String[] args, Supplier<? extends Bot> factory) {
    System.exit(run(args, System.getenv(), factory, System.out, System.err));
  }

  /** Runs a bot; returns the process exit code. */
  public static int run(
      String[] args,
      Map<String, String> env,
      Supplier<? extends Bot> factory,
      PrintStream out,
      PrintStream err) {
    Options options;
    try {
      options = parse(args, env);
    } catch (UsageException e) {
      err.println("error: " + e.getMessage());
      err.println(usage());
      return EXIT_USAGE;
    }
    if (options == null) {
      out.println(usage());
      return EXIT_OK;
    }
    Bot bot = factory.get();
    if (options.misbehave()) {
      bot = new MisbehavingBot(bot);
    }
    String name = bot.name();
    try {
      MatchOutcome outcome = BotRunner.run(bot, options.address(), options.token());
      out.println(name + ": " + outcome.summary());
      return EXIT_OK;
    } catch (BotRefusedException e) {
      err.println(name + ": refused: " + e.getMessage());
      return EXIT_REFUSED;
    } catch (RefereeUnreachableException e) {
      err.println(name + ": " + e.getMessage() + " (address " + options.address() + ")");
      return EXIT_UNREACHABLE;
    } catch (StatusRuntimeException e) {
      err.println(name + ": the stream failed: " + e.getStatus());
      return EXIT_STREAM_FAILED;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println(name + ": interrupted");
      return EXIT_STREAM_FAILED;
    }
  }

  /**
   * Reads the command line, then the environment for what it leaves out.
   *
   * @return the options, or {@code null} when help was asked for
   */
  public static Options parse(String[] args, Map<String, String> env) throws UsageException {
    String address = null;
    String token = null;
    boolean misbehave = false;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      String value = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        value = arg.substring(eq + 1);
        arg = arg.substring(0, eq);
      }
      switch (arg) {
        case "-h", "--help" -> {
          return null;
        }
        case "--misbehave" -> {
          if (value != null) {
            throw new UsageException("--misbehave takes no value");
          }
          misbehave = true;
        }
        case "--address", "--token" -> {
          if (value == null) {
            if (i + 1 >= args.length) {
              throw new UsageException(arg + " needs a value");
            }
            value = args[++i];
          }
          if (arg.equals("--address")) {
            address = value;
          } else {
            token = value;
          }
        }
        default -> throw new UsageException("unknown argument: " + args[i]);
      }
    }
    if (address == null || address.isBlank()) {
      address = env.getOrDefault("PUSOY_ADDRESS", "");
    }
    if (address.isBlank()) {
      address = DEFAULT_ADDRESS;
    }
    if (token == null || token.isBlank()) {
      token = env.getOrDefault("PUSOY_TOKEN", "");
    }
    if (token.isBlank()) {
      throw new UsageException("a seat token is needed: --token or PUSOY_TOKEN");
    }
    if (!misbehave) {
      misbehave = isTrue(env.get("PUSOY_MISBEHAVE"));
    }
    return new Options(address, token, misbehave);
  }

  private static boolean isTrue(String value) {
    if (value == null) {
      return false;
    }
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "1", "true", "yes", "on" -> true;
      default -> false;
    };
  }

  /** The usage text. */
  public static String usage() {
    return String.join(
        "\n",
        "usage: bot [--address HOST:PORT] [--token TOKEN] [--misbehave]",
        "  --address    the referee (default: $PUSOY_ADDRESS, else " + DEFAULT_ADDRESS + ")",
        "  --token      the seat's secret token (default: $PUSOY_TOKEN)",
        "  --misbehave  open each hand with an illegal play, to check recovery",
        "               (also PUSOY_MISBEHAVE=1)");
  }
}
