package io.pusoyreferee.client;

/**
 * The library's safe answer (docs/kits.md, section 4). It is sent when {@code choose} is
 * late, throws or returns nothing, and is what {@link Bot#onRejected} returns by default. It
 * is computed by the library alone, so that it can be sent while the bot's worker is busy.
 */
public final class Fallback {

  private Fallback() {}

  /**
   * A pass when allowed; else the weakest legal play; else (the bot asked for no legal plays)
   * the card the play must include, or the lowest card of the hand, alone; else a pass.
   * With legal plays asked for, an empty list means a pass is the only legal action.
   */
  public static Choice of(Prompt prompt) {
    if (prompt.canPass()) {
      return Choice.pass();
    }
    if (!prompt.legalPlays().isEmpty()) {
      return Choice.play(prompt.legalPlays().get(0));
    }
    if (!prompt.mustInclude().isEmpty()) {
      return Choice.play(prompt.mustInclude());
    }
    if (!prompt.hand().isEmpty()) {
      return Choice.play(prompt.hand().get(0));
    }
    return Choice.pass();
  }
}
