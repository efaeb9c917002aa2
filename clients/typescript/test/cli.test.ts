import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseCommandLine, UsageError } from "../src/lib";

describe("parseCommandLine", () => {
  it("reads the flags", () => {
    const opts = parseCommandLine(["--address", "10.0.0.1:9", "--token", "t1", "--misbehave", "--reconnect-window-ms", "5000"], {});
    assert.equal(opts.address, "10.0.0.1:9");
    assert.equal(opts.token, "t1");
    assert.equal(opts.misbehave, true);
    assert.equal(opts.reconnectWindowMs, 5000);
    assert.equal(opts.safetyMarginMs, 50);
  });

  it("falls back on the PUSOY_* variables, then the defaults", () => {
    const env = { PUSOY_ADDRESS: "127.0.0.1:7000", PUSOY_TOKEN: "t2", PUSOY_MISBEHAVE: "1", PUSOY_SAFETY_MARGIN_MS: "80" };
    const opts = parseCommandLine([], env);
    assert.equal(opts.address, "127.0.0.1:7000");
    assert.equal(opts.misbehave, true);
    assert.equal(opts.safetyMarginMs, 80);
    assert.equal(opts.reconnectWindowMs, 60_000);
    assert.equal(parseCommandLine(["--token", "t3"], env).token, "t3");
    assert.equal(parseCommandLine([], { PUSOY_TOKEN: "t" }).address, "127.0.0.1:50051");
  });

  it("asks for batched events with --batch-events or PUSOY_BATCH_EVENTS=1", () => {
    assert.equal(parseCommandLine(["--token", "t"], {}).batchEvents, false);
    assert.equal(parseCommandLine(["--token", "t", "--batch-events"], {}).batchEvents, true);
    assert.equal(parseCommandLine(["--token", "t"], { PUSOY_BATCH_EVENTS: "1" }).batchEvents, true);
    assert.equal(parseCommandLine(["--token", "t"], { PUSOY_BATCH_EVENTS: "0" }).batchEvents, false);
  });

  it("is a usage error without a token, with an unknown flag, or with an unreadable TLS file", () => {
    assert.throws(() => parseCommandLine([], {}), UsageError);
    assert.throws(() => parseCommandLine(["--token", "t", "--bogus"], {}), UsageError);
    assert.throws(() => parseCommandLine(["--token", "t", "--tls-ca", "/no/such/file"], {}), UsageError);
    assert.throws(() => parseCommandLine(["--token", "t", "--tls-cert", "/etc/hostname"], {}), UsageError);
  });
});
