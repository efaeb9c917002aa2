import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseCommandLine, UsageError } from "../src/lib";

describe("parseCommandLine", () => {
  it("reads --address, --token and --misbehave", () => {
    const opts = parseCommandLine(["--address", "10.0.0.1:9", "--token", "t1", "--misbehave"], {});
    assert.deepEqual(opts, { address: "10.0.0.1:9", token: "t1", misbehave: true, debug: false });
  });

  it("falls back on PUSOY_ADDRESS, PUSOY_TOKEN and PUSOY_MISBEHAVE", () => {
    const env = { PUSOY_ADDRESS: "127.0.0.1:7000", PUSOY_TOKEN: "t2", PUSOY_MISBEHAVE: "1" };
    assert.deepEqual(parseCommandLine([], env), { address: "127.0.0.1:7000", token: "t2", misbehave: true, debug: false });
    assert.equal(parseCommandLine(["--token", "t3"], env).token, "t3");
    assert.equal(parseCommandLine([], { PUSOY_TOKEN: "t" }).address, "127.0.0.1:50051");
    assert.equal(parseCommandLine([], { PUSOY_TOKEN: "t" }).misbehave, false);
  });

  it("needs a token and known flags", () => {
    assert.throws(() => parseCommandLine([], {}), UsageError);
    assert.throws(() => parseCommandLine(["--token", "t", "--bogus"], {}));
  });
});
