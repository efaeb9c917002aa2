package io.pusoyreferee.client;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.TlsChannelCredentials;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Connection settings (docs/kits.md, section 7): every flag of {@link #parse} has an
 * environment variable, the flag winning.
 *
 * <pre>{@code
 * Options options = Options.builder().address("127.0.0.1:50051").token(token).build();
 * Options options = Options.parse(args, System.getenv());   // the bot's command line
 * }</pre>
 */
public final class Options {

  public static final String DEFAULT_ADDRESS = "127.0.0.1:50051";
  public static final Duration DEFAULT_RECONNECT_WINDOW = Duration.ofSeconds(60);
  public static final Duration DEFAULT_SAFETY_MARGIN = Duration.ofMillis(50);

  private final String address;
  private final String token;
  private final Duration reconnectWindow;
  private final Duration safetyMargin;
  private final boolean tls;
  private final String tlsCa;
  private final String tlsCert;
  private final String tlsKey;
  private final String tlsServerName;
  private final boolean misbehave;
  private final boolean batchEvents;

  private Options(Builder b) {
    address = b.address;
    token = b.token;
    reconnectWindow = b.reconnectWindow;
    safetyMargin = b.safetyMargin;
    tls = b.tls;
    tlsCa = b.tlsCa;
    tlsCert = b.tlsCert;
    tlsKey = b.tlsKey;
    tlsServerName = b.tlsServerName;
    misbehave = b.misbehave;
    batchEvents = b.batchEvents;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these settings. */
  public Builder toBuilder() {
    return new Builder()
        .address(address)
        .token(token)
        .reconnectWindow(reconnectWindow)
        .safetyMargin(safetyMargin)
        .tls(tls)
        .tlsCa(tlsCa)
        .tlsCert(tlsCert)
        .tlsKey(tlsKey)
        .tlsServerName(tlsServerName)
        .misbehave(misbehave)
        .batchEvents(batchEvents);
  }

  /** The referee, {@code host:port}. */
  public String address() {
    return address;
  }

  /** The seat's secret token. */
  public String token() {
    return token;
  }

  /** How long to keep trying to (re)gain the seat, from the loss of the seat or the start. */
  public Duration reconnectWindow() {
    return reconnectWindow;
  }

  /** How long before the end of the turn (and bank) the answer is due. */
  public Duration safetyMargin() {
    return safetyMargin;
  }

  /** Whether the connection uses TLS ({@code --tls}, or a CA file or client certificate). */
  public boolean usesTls() {
    return tls || !tlsCa.isEmpty() || !tlsCert.isEmpty() || !tlsKey.isEmpty();
  }

  /** PEM bundle of the CA that signs the referee's certificate; "" for the system's CAs. */
  public String tlsCa() {
    return tlsCa;
  }

  /** PEM client certificate for mutual TLS, or "". */
  public String tlsCert() {
    return tlsCert;
  }

  /** PEM (PKCS#8) client key for mutual TLS, or "". */
  public String tlsKey() {
    return tlsKey;
  }

  /** The name checked in the referee's certificate; "" for the address's host. */
  public String tlsServerName() {
    return tlsServerName;
  }

  /** Sample bots: open each hand with a card not held, to exercise rejections. */
  public boolean misbehave() {
    return misbehave;
  }

  /** Ask for batched events (Hello.batch_events): events come in prompts and batches. */
  public boolean batchEvents() {
    return batchEvents;
  }

  /**
   * What cannot work, as a {@link UsageException}: no token, no address, half a client
   * certificate, an unreadable TLS file.
   */
  public void check() throws UsageException {
    if (token.isEmpty()) {
      throw new UsageException("a seat token is needed: --token or PUSOY_TOKEN");
    }
    if (address.isEmpty()) {
      throw new UsageException("no referee address: --address or PUSOY_ADDRESS");
    }
    credentials();
  }

  /** The channel credentials these settings ask for (plaintext without TLS). */
  public ChannelCredentials credentials() throws UsageException {
    if (!usesTls()) {
      return InsecureChannelCredentials.create();
    }
    if (tlsCert.isEmpty() != tlsKey.isEmpty()) {
      throw new UsageException("--tls-cert and --tls-key go together");
    }
    TlsChannelCredentials.Builder creds = TlsChannelCredentials.newBuilder();
    try {
      if (!tlsCa.isEmpty()) {
        creds.trustManager(readable(tlsCa, "CA file"));
      }
      if (!tlsCert.isEmpty()) {
        creds.keyManager(readable(tlsCert, "client certificate"), readable(tlsKey, "client key"));
      }
    } catch (IOException | RuntimeException e) {
      throw new UsageException("cannot use the TLS files: " + e.getMessage(), e);
    }
    return creds.build();
  }

  /** A channel to the referee with these settings; the caller shuts it down. */
  public ManagedChannel channel() throws UsageException {
    ManagedChannelBuilder<?> builder =
        Grpc.newChannelBuilder(address, credentials()).userAgent("pusoy-java-kit");
    if (usesTls() && !tlsServerName.isEmpty()) {
      builder.overrideAuthority(tlsServerName);
    }
    return builder.build();
  }

  private static File readable(String path, String what) throws UsageException {
    File file = new File(path);
    if (!file.isFile() || !file.canRead()) {
      throw new UsageException("cannot read the " + what + " " + path);
    }
    return file;
  }

  /**
   * Reads the kits' common flags, then the environment for what they leave out.
   *
   * @return the settings, or {@code null} when help was asked for
   * @throws UsageException a bad flag or value, a missing token, an unreadable TLS file
   */
  public static Options parse(String[] args, Map<String, String> env) throws UsageException {
    Builder b = builder();
    b.address(env.getOrDefault("PUSOY_ADDRESS", ""));
    if (b.address.isEmpty()) {
      b.address(DEFAULT_ADDRESS);
    }
    b.token(env.getOrDefault("PUSOY_TOKEN", ""));
    b.reconnectWindow(millis("PUSOY_RECONNECT_WINDOW_MS", env.get("PUSOY_RECONNECT_WINDOW_MS"), DEFAULT_RECONNECT_WINDOW));
    b.safetyMargin(millis("PUSOY_SAFETY_MARGIN_MS", env.get("PUSOY_SAFETY_MARGIN_MS"), DEFAULT_SAFETY_MARGIN));
    b.tls(isTrue(env.get("PUSOY_TLS")));
    b.tlsCa(env.getOrDefault("PUSOY_TLS_CA", ""));
    b.tlsCert(env.getOrDefault("PUSOY_TLS_CERT", ""));
    b.tlsKey(env.getOrDefault("PUSOY_TLS_KEY", ""));
    b.tlsServerName(env.getOrDefault("PUSOY_TLS_SERVER_NAME", ""));
    b.misbehave(isTrue(env.get("PUSOY_MISBEHAVE")));
    b.batchEvents(isTrue(env.get("PUSOY_BATCH_EVENTS")));
    for (int i = 0; i < args.length; i++) {
      String flag = args[i];
      String value = null;
      int eq = flag.indexOf('=');
      if (flag.startsWith("--") && eq > 0) {
        value = flag.substring(eq + 1);
        flag = flag.substring(0, eq);
      }
      switch (flag) {
        case "-h", "--help" -> {
          return null;
        }
        case "--tls", "--misbehave", "--batch-events" -> {
          if (value != null) {
            throw new UsageException(flag + " takes no value");
          }
          switch (flag) {
            case "--tls" -> b.tls(true);
            case "--misbehave" -> b.misbehave(true);
            default -> b.batchEvents(true);
          }
        }
        case "--address", "--token", "--reconnect-window-ms", "--safety-margin-ms", "--tls-ca",
            "--tls-cert", "--tls-key", "--tls-server-name" -> {
          if (value == null) {
            if (i + 1 >= args.length) {
              throw new UsageException(flag + " needs a value");
            }
            value = args[++i];
          }
          switch (flag) {
            case "--address" -> b.address(value);
            case "--token" -> b.token(value);
            case "--reconnect-window-ms" -> b.reconnectWindow(millis(flag, value, null));
            case "--safety-margin-ms" -> b.safetyMargin(millis(flag, value, null));
            case "--tls-ca" -> b.tlsCa(value);
            case "--tls-cert" -> b.tlsCert(value);
            case "--tls-key" -> b.tlsKey(value);
            default -> b.tlsServerName(value);
          }
        }
        default -> throw new UsageException("unknown argument: " + args[i]);
      }
    }
    Options options = b.build();
    options.check();
    return options;
  }

  private static Duration millis(String name, String value, Duration unset) throws UsageException {
    if (value == null || value.isBlank()) {
      if (unset == null) {
        throw new UsageException(name + " needs a number of milliseconds");
      }
      return unset;
    }
    try {
      long ms = Long.parseLong(value.trim());
      if (ms < 0) {
        throw new NumberFormatException();
      }
      return Duration.ofMillis(ms);
    } catch (NumberFormatException e) {
      throw new UsageException(name + ": not a number of milliseconds: " + value);
    }
  }

  static boolean isTrue(String value) {
    if (value == null) {
      return false;
    }
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "1", "true", "yes", "on" -> true;
      default -> false;
    };
  }

  /** The usage text of a bot's command line. */
  public static String usage() {
    return String.join(
        "\n",
        "usage: bot [--address HOST:PORT] [--token TOKEN] [--reconnect-window-ms N]",
        "           [--safety-margin-ms N] [--tls] [--tls-ca FILE] [--tls-cert FILE --tls-key FILE]",
        "           [--tls-server-name NAME] [--batch-events] [--misbehave]",
        "  --address              the referee (PUSOY_ADDRESS, default " + DEFAULT_ADDRESS + ")",
        "  --token                the seat's secret token (PUSOY_TOKEN; required)",
        "  --reconnect-window-ms  how long to try to get the seat back (PUSOY_RECONNECT_WINDOW_MS, 60000)",
        "  --safety-margin-ms     answer this long before the budget ends (PUSOY_SAFETY_MARGIN_MS, 50)",
        "  --tls                  TLS with the system's trusted CAs (PUSOY_TLS=1)",
        "  --tls-ca               PEM CA bundle of the referee's certificate (PUSOY_TLS_CA; implies TLS)",
        "  --tls-cert, --tls-key  client certificate and PKCS#8 key for mutual TLS (PUSOY_TLS_CERT,",
        "                         PUSOY_TLS_KEY; both or neither; imply TLS)",
        "  --tls-server-name      the name checked in the referee's certificate (PUSOY_TLS_SERVER_NAME)",
        "  --batch-events         events batched into prompts, fewer messages (PUSOY_BATCH_EVENTS=1)",
        "  --misbehave            open each hand with a card not held, to exercise rejections",
        "                         (PUSOY_MISBEHAVE=1)",
        "exit status: 0 the match ended, 1 internal error, 2 refused, 3 referee unreachable,",
        "             4 stream failed for good, 64 usage error");
  }

  @Override
  public String toString() {
    return "Options[address="
        + address
        + ", tls="
        + usesTls()
        + ", reconnectWindow="
        + reconnectWindow.toMillis()
        + " ms, safetyMargin="
        + safetyMargin.toMillis()
        + " ms, batchEvents="
        + batchEvents
        + "]";
  }

  /** Builds {@link Options}; every setting starts at its default. */
  public static final class Builder {
    private String address = DEFAULT_ADDRESS;
    private String token = "";
    private Duration reconnectWindow = DEFAULT_RECONNECT_WINDOW;
    private Duration safetyMargin = DEFAULT_SAFETY_MARGIN;
    private boolean tls;
    private String tlsCa = "";
    private String tlsCert = "";
    private String tlsKey = "";
    private String tlsServerName = "";
    private boolean misbehave;
    private boolean batchEvents;

    private Builder() {}

    public Builder address(String v) {
      address = Objects.requireNonNull(v);
      return this;
    }

    public Builder token(String v) {
      token = Objects.requireNonNull(v);
      return this;
    }

    public Builder reconnectWindow(Duration v) {
      reconnectWindow = Objects.requireNonNull(v);
      return this;
    }

    public Builder safetyMargin(Duration v) {
      safetyMargin = Objects.requireNonNull(v);
      return this;
    }

    public Builder tls(boolean v) {
      tls = v;
      return this;
    }

    public Builder tlsCa(String v) {
      tlsCa = Objects.requireNonNull(v);
      return this;
    }

    public Builder tlsCert(String v) {
      tlsCert = Objects.requireNonNull(v);
      return this;
    }

    public Builder tlsKey(String v) {
      tlsKey = Objects.requireNonNull(v);
      return this;
    }

    public Builder tlsServerName(String v) {
      tlsServerName = Objects.requireNonNull(v);
      return this;
    }

    public Builder misbehave(boolean v) {
      misbehave = v;
      return this;
    }

    public Builder batchEvents(boolean v) {
      batchEvents = v;
      return this;
    }

    public Options build() {
      return new Options(this);
    }
  }
}
