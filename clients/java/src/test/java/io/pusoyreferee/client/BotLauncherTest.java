package io.pusoyreferee.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pusoyreferee.client.BotLauncher.Options;
import io.pusoyreferee.client.BotLauncher.UsageException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BotLauncherTest {

  @Test
  void readsTheCommandLine() throws UsageException {
    Options options =
        BotLauncher.parse(new String[] {"--address", "10.0.0.1:9", "--token", "t", "--misbehave"}, Map.of());
    assertEquals(new Options("10.0.0.1:9", "t", true), options);
    assertEquals(
        new Options("h:1", "t2", false),
        BotLauncher.parse(new String[] {"--address=h:1", "--token=t2"}, Map.of()));
  }

  @Test
  void fallsBackToTheEnvironment() throws UsageException {
    Map<String, String> env =
        Map.of("PUSOY_ADDRESS", "127.0.0.1:5000", "PUSOY_TOKEN", "env-token", "PUSOY_MISBEHAVE", "1");
    assertEquals(new Options("127.0.0.1:5000", "env-token", true), BotLauncher.parse(new String[0], env));
    assertEquals(
        new Options("127.0.0.1:5000", "cli", true),
        BotLauncher.parse(new String[] {"--token", "cli"}, env));
    Options plain = BotLauncher.parse(new String[0], Map.of("PUSOY_TOKEN", "x", "PUSOY_MISBEHAVE", "0"));
    assertEquals(BotLauncher.DEFAULT_ADDRESS, plain.address());
    assertFalse(plain.misbehave());
  }

  @Test
  void rejectsBadCommandLines() {
    assertThrows(UsageException.class, () -> BotLauncher.parse(new String[0], Map.of()));
    assertThrows(UsageException.class, () -> BotLauncher.parse(new String[] {"--token"}, Map.of()));
    assertThrows(
        UsageException.class, () -> BotLauncher.parse(new String[] {"--token", "t", "--bogus"}, Map.of()));
    assertNull(assertDoesNotThrowHelp());
  }

  private static Options assertDoesNotThrowHelp() {
    try {
      return BotLauncher.parse(new String[] {"--help"}, Map.of());
    } catch (UsageException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void aMissingTokenExitsWithTheUsageCode() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);
    int code =
        BotLauncher.run(new String[0], Map.of(), () -> p -> Choice.pass(), System.out, errStream);
    assertEquals(BotLauncher.EXIT_USAGE, code);
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("token"));
  }
}
