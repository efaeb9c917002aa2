package io.pusoyreferee.client;

/**
 * The line written to standard error when the bot's own code throws on a turn ({@code choose}
 * or {@code onRejected}) and the library sends the fallback instead (docs/kits.md, section 5):
 * the referee finds it in the bot's output and names it ("the bot's code raised at move 14").
 */
public final class Raised {
  /** The first word of the line. */
  public static final String MARKER = "PUSOY_BOT_RAISED";

  /** How many characters of what was thrown (its class and message) the line keeps. */
  public static final int MAX_CHARS = 200;

  private Raised() {}

  /**
   * The marker line for {@code thrown} in the bot's {@code call} ({@code choose} or {@code
   * on_rejected}) on turn {@code turnId}: one line, the class's simple name and the message,
   * control characters made spaces.
   */
  public static String line(long turnId, String call, Throwable thrown) {
    String name = thrown.getClass().getSimpleName();
    if (name.isEmpty()) {
      name = thrown.getClass().getName(); // an anonymous class
    }
    String message = thrown.getMessage();
    String error = message == null || message.isEmpty() ? name : name + ": " + message;
    StringBuilder shown = new StringBuilder();
    error
        .codePoints()
        .limit(MAX_CHARS)
        .forEach(
            c ->
                shown.appendCodePoint(
                    Character.isISOControl(c) || c == 0x2028 || c == 0x2029 ? ' ' : c));
    return MARKER + " turn=" + Long.toUnsignedString(turnId) + " call=" + call + " error=" + shown;
  }
}
