package io.pusoyreferee.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OptionsTest {

  private static final Path TLS = Path.of("..", "conformance", "tls").toAbsolutePath();

  @Test
  void readsEveryFlag() throws UsageException {
    Options o =
        Options.parse(
            new String[] {
              "--address", "10.0.0.1:9", "--token=t", "--misbehave", "--batch-events",
              "--reconnect-window-ms", "1500", "--safety-margin-ms=80", "--tls",
              "--tls-server-name", "referee.example"
            },
            Map.of());
    assertEquals("10.0.0.1:9", o.address());
    assertEquals("t", o.token());
    assertTrue(o.misbehave());
    assertTrue(o.batchEvents());
    assertEquals(Duration.ofMillis(1500), o.reconnectWindow());
    assertEquals(Duration.ofMillis(80), o.safetyMargin());
    assertTrue(o.usesTls());
    assertEquals("referee.example", o.tlsServerName());
  }

  @Test
  void theEnvironmentFillsWhatTheFlagsLeaveOut() throws UsageException {
    Map<String, String> env =
        Map.of(
            "PUSOY_ADDRESS", "127.0.0.1:5000",
            "PUSOY_TOKEN", "env-token",
            "PUSOY_MISBEHAVE", "1",
            "PUSOY_RECONNECT_WINDOW_MS", "2000",
            "PUSOY_SAFETY_MARGIN_MS", "70",
            "PUSOY_BATCH_EVENTS", "true");
    Options o = Options.parse(new String[0], env);
    assertEquals("127.0.0.1:5000", o.address());
    assertEquals("env-token", o.token());
    assertTrue(o.misbehave());
    assertTrue(o.batchEvents());
    assertEquals(Duration.ofMillis(2000), o.reconnectWindow());
    assertEquals(Duration.ofMillis(70), o.safetyMargin());
    assertFalse(o.usesTls());
    Options flagWins = Options.parse(new String[] {"--token", "cli", "--reconnect-window-ms", "5"}, env);
    assertEquals("cli", flagWins.token());
    assertEquals(Duration.ofMillis(5), flagWins.reconnectWindow());
    Options plain = Options.parse(new String[0], Map.of("PUSOY_TOKEN", "x", "PUSOY_MISBEHAVE", "0"));
    assertEquals(Options.DEFAULT_ADDRESS, plain.address());
    assertEquals(Duration.ofSeconds(60), plain.reconnectWindow());
    assertEquals(Duration.ofMillis(50), plain.safetyMargin());
    assertFalse(plain.misbehave());
    assertFalse(plain.batchEvents());
  }

  @Test
  void tlsFilesImplyTlsAndMustBeReadable() throws UsageException {
    String ca = TLS.resolve("ca.pem").toString();
    Options withCa = Options.parse(new String[] {"--token", "t", "--tls-ca", ca}, Map.of());
    assertTrue(withCa.usesTls());
    Options mutual =
        Options.parse(
            new String[0],
            Map.of(
                "PUSOY_TOKEN", "t",
                "PUSOY_TLS_CA", ca,
                "PUSOY_TLS_CERT", TLS.resolve("client.pem").toString(),
                "PUSOY_TLS_KEY", TLS.resolve("client.key").toString()));
    assertTrue(mutual.usesTls());
    assertThrows(
        UsageException.class,
        () -> Options.parse(new String[] {"--token", "t", "--tls-ca", TLS.resolve("nope.pem").toString()}, Map.of()));
    assertThrows(
        UsageException.class,
        () ->
            Options.parse(
                new String[] {"--token", "t", "--tls-cert", TLS.resolve("client.pem").toString()}, Map.of()));
  }

  @Test
  void rejectsBadCommandLines() {
    assertThrows(UsageException.class, () -> Options.parse(new String[0], Map.of()));
    assertThrows(UsageException.class, () -> Options.parse(new String[] {"--token"}, Map.of()));
    assertThrows(UsageException.class, () -> Options.parse(new String[] {"--token", "t", "--bogus"}, Map.of()));
    assertThrows(
        UsageException.class,
        () -> Options.parse(new String[] {"--token", "t", "--reconnect-window-ms", "soon"}, Map.of()));
    assertThrows(
        UsageException.class,
        () -> Options.parse(new String[0], Map.of("PUSOY_TOKEN", "t", "PUSOY_SAFETY_MARGIN_MS", "-1")));
    assertThrows(UsageException.class, () -> Options.parse(new String[] {"--token", "t", "--tls=yes"}, Map.of()));
  }

  @Test
  void helpIsNotAnError() throws UsageException {
    assertNull(Options.parse(new String[] {"--help"}, Map.of()));
  }

  @Test
  void usageErrorsExitWith64() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);
    int code = BotLauncher.run(new String[0], Map.of(), o -> p -> Choice.pass(), System.out, errStream);
    assertEquals(BotLauncher.EXIT_USAGE, code);
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("token"));
    int tls =
        BotLauncher.run(
            new String[] {"--token", "t", "--tls-ca", "/no/such/ca.pem"},
            Map.of(),
            o -> p -> Choice.pass(),
            System.out,
            errStream);
    assertEquals(BotLauncher.EXIT_USAGE, tls);
  }
}
