/**
 * Connection settings (docs/kits.md, section 7): the flags every kit's bot takes, each
 * with its environment variable, and the gRPC credentials they make (TLS, mutual TLS).
 */

import { ChannelCredentials, credentials } from "@grpc/grpc-js";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

export const DEFAULT_ADDRESS = "127.0.0.1:50051";
/** Retry for this long after losing the seat (or from the start) before giving up. */
export const RECONNECT_WINDOW_MS = 60_000;
/** Answer this long before the end of the budget. */
export const SAFETY_MARGIN_MS = 50;

/** Bad flags or settings (exit 64). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export interface Options {
  /** host:port of the referee. */
  address: string;
  /** The seat's secret token. */
  token: string;
  reconnectWindowMs?: number;
  safetyMarginMs?: number;
  /** TLS with the system's trusted CAs (implied by any TLS file). */
  tls?: boolean;
  /** PEM file of the CA that signs the referee's certificate. */
  tlsCa?: string;
  /** PEM client certificate and key, for mutual TLS. */
  tlsCert?: string;
  tlsKey?: string;
  /** The name to check in the referee's certificate instead of the address's host. */
  tlsServerName?: string;
  /**
   * Ask for the events batched into the prompts (Hello.batch_events, docs/protocol.md
   * 3.5): fewer messages; `onEvent` still sees every event, just before the bot's turn.
   */
  batchEvents?: boolean;
  /** Sample bots: the first answer of each hand is a card not held. */
  misbehave?: boolean;
  /** Also note every message received. */
  debug?: boolean;
}

export function usesTls(o: Options): boolean {
  return Boolean(o.tls || o.tlsCa || o.tlsCert || o.tlsKey);
}

function read(path: string | undefined, what: string): Buffer | null {
  if (!path) return null;
  try {
    return readFileSync(path);
  } catch (err) {
    throw new UsageError(`cannot read the ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
}

/** The channel credentials the options ask for; UsageError when a file cannot be read. */
export function channelCredentials(o: Options): ChannelCredentials {
  if (!usesTls(o)) return credentials.createInsecure();
  if (Boolean(o.tlsCert) !== Boolean(o.tlsKey)) throw new UsageError("--tls-cert and --tls-key go together");
  return credentials.createSsl(read(o.tlsCa, "CA file"), read(o.tlsKey, "client key"), read(o.tlsCert, "client certificate"));
}

/** gRPC channel options: reconnect as fast as the runner asks, and the TLS name. */
export function channelOptions(o: Options): Record<string, string | number> {
  const out: Record<string, string | number> = {
    "grpc.initial_reconnect_backoff_ms": 50,
    "grpc.min_reconnect_backoff_ms": 50,
    "grpc.max_reconnect_backoff_ms": 1000,
  };
  if (o.tlsServerName) out["grpc.ssl_target_name_override"] = o.tlsServerName;
  return out;
}

export const USAGE = `usage: bot [--address HOST:PORT] [--token TOKEN] [--misbehave] [--batch-events]
           [--reconnect-window-ms N] [--safety-margin-ms N]
           [--tls] [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] [--tls-server-name NAME]

  --address              the referee ($PUSOY_ADDRESS, else ${DEFAULT_ADDRESS})
  --token                the seat's secret token ($PUSOY_TOKEN)
  --misbehave            a card not in hand as the first answer of each hand ($PUSOY_MISBEHAVE=1)
  --batch-events         events batched into the prompts ($PUSOY_BATCH_EVENTS=1)
  --reconnect-window-ms  retry this long after losing the seat ($PUSOY_RECONNECT_WINDOW_MS, 60000)
  --safety-margin-ms     answer this long before the budget ends ($PUSOY_SAFETY_MARGIN_MS, 50)
  --tls                  TLS with the system's CAs ($PUSOY_TLS=1)
  --tls-ca               the CA of the referee's certificate ($PUSOY_TLS_CA)
  --tls-cert, --tls-key  client certificate and key for mutual TLS ($PUSOY_TLS_CERT, $PUSOY_TLS_KEY)
  --tls-server-name      the name to check in the certificate ($PUSOY_TLS_SERVER_NAME)

PUSOY_DEBUG=1 also logs every message received to stderr.`;

function isOn(value: string | undefined): boolean {
  return ["1", "true", "yes", "on"].includes((value ?? "").toLowerCase());
}

function ms(flag: string | undefined, env: string | undefined, name: string, def: number): number {
  const text = flag ?? (env || undefined);
  if (text === undefined) return def;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${name}: not a number of milliseconds: ${text}`);
  return n;
}

/** Reads the command line and the environment (the flag wins); throws UsageError. */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): Options {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        address: { type: "string" },
        token: { type: "string" },
        misbehave: { type: "boolean" },
        "batch-events": { type: "boolean" },
        "reconnect-window-ms": { type: "string" },
        "safety-margin-ms": { type: "string" },
        tls: { type: "boolean" },
        "tls-ca": { type: "string" },
        "tls-cert": { type: "string" },
        "tls-key": { type: "string" },
        "tls-server-name": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  if (values.help) throw new UsageError("");
  const token = values.token ?? env.PUSOY_TOKEN ?? "";
  if (token === "") throw new UsageError("a seat token is needed: --token or PUSOY_TOKEN");
  const options: Options = {
    address: values.address ?? (env.PUSOY_ADDRESS || DEFAULT_ADDRESS),
    token,
    misbehave: values.misbehave ?? isOn(env.PUSOY_MISBEHAVE),
    batchEvents: values["batch-events"] ?? isOn(env.PUSOY_BATCH_EVENTS),
    debug: isOn(env.PUSOY_DEBUG),
    reconnectWindowMs: ms(values["reconnect-window-ms"], env.PUSOY_RECONNECT_WINDOW_MS, "reconnect window", RECONNECT_WINDOW_MS),
    safetyMarginMs: ms(values["safety-margin-ms"], env.PUSOY_SAFETY_MARGIN_MS, "safety margin", SAFETY_MARGIN_MS),
    tls: values.tls ?? isOn(env.PUSOY_TLS),
    tlsCa: values["tls-ca"] ?? (env.PUSOY_TLS_CA || undefined),
    tlsCert: values["tls-cert"] ?? (env.PUSOY_TLS_CERT || undefined),
    tlsKey: values["tls-key"] ?? (env.PUSOY_TLS_KEY || undefined),
    tlsServerName: values["tls-server-name"] ?? (env.PUSOY_TLS_SERVER_NAME || undefined),
  };
  channelCredentials(options); // fail now on an unreadable file
  return options;
}
