// An independent verifier of match logs, written from docs/log-format.md alone (sections 1,
// 6, 9 and 10), with Node.js's standard library only: proof that the page says enough to
// check a log without the proto or the referee's code. It checks what the page's section 9
// lists: the lines, the entries' sequence numbers, match id, schema version, hash chain and
// times, the first and last events and the seed commitment, and the signature trailer. It
// does not check the rules (that is `referee verify`'s re-deciding).
//
// Usage: node log_verify.mjs [--public-key KEY] LOG...
//   KEY: the referee's public key as base64 text, or a file holding it (base64 or PEM).
// Prints one line per log: "OK: LOG: N entries, signed by KEY" (or "..., unsigned"),
// "UNSIGNED: LOG: ..." (with --public-key, a log with no trailer) or
// "FAILED: LOG: line N: why". Exits 0 when every log is OK, 1 otherwise, 2 on bad usage.
import { createHash, createPublicKey, verify } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";

const MAX_LINE_BYTES = 1 << 20;
const TRAILER_PREFIX = Buffer.from('{"trailer":', "utf8");
const CONTEXT = "pusoy-referee-log-v1";

// Section 10: LogEntry's and LogTrailer's fields, the kinds an event or a command holds.
const ENTRY_FIELDS = ["match_id", "seq", "time", "prev_hash", "schema_version", "event", "command"];
const TRAILER_FIELDS = ["match_id", "lines", "final_hash", "algorithm", "public_key", "signature"];
const EVENT_KINDS = [
  "match_created", "seat_connected", "seat_disconnected", "hand_dealt", "turn_started",
  "action_rejected", "played", "passed", "trick_cleared", "hand_ended", "match_ended",
  "referee_restarted",
];
const COMMAND_KINDS = ["create", "connect", "disconnect", "action", "timer", "cancel", "restart"];

const HEX64 = /^[0-9a-f]{64}$/;
const DIGITS = /^(0|[1-9][0-9]*)$/;
const TIME = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?Z$/;

class Failure extends Error {
  constructor(line, message) {
    super(message);
    this.line = line;
  }
}

function sha256Hex(bytes) {
  return createHash("sha256").update(bytes).digest("hex");
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// An RFC 3339 UTC time (section 1) in nanoseconds since the epoch, as a BigInt.
function parseTime(text, line, what) {
  const m = typeof text === "string" ? TIME.exec(text) : null;
  if (m === null) throw new Failure(line, `${what} is not an RFC 3339 UTC time: ${JSON.stringify(text)}`);
  const [, y, mo, d, h, mi, s, frac] = m;
  const ms = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s);
  const date = new Date(ms);
  if (Number.isNaN(ms) || date.getUTCDate() !== +d || date.getUTCHours() !== +h || +s > 59) {
    throw new Failure(line, `${what} is not a real time: ${text}`);
  }
  return BigInt(ms) * 1_000_000n + BigInt((frac ?? "").padEnd(9, "0") || "0");
}

// Standard base64 with padding (RFC 4648 section 4), refused unless canonical.
function strictBase64(text) {
  if (typeof text !== "string" || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    return null;
  }
  const bytes = Buffer.from(text, "base64");
  return bytes.toString("base64") === text ? bytes : null;
}

function oneKind(value, kinds, line, what) {
  if (!isObject(value)) throw new Failure(line, `${what} is not an object`);
  const keys = Object.keys(value);
  if (keys.length !== 1 || !kinds.includes(keys[0]) || !isObject(value[keys[0]])) {
    throw new Failure(line, `${what} must hold exactly one kind, got ${JSON.stringify(keys)}`);
  }
  return keys[0];
}

// Section 1 and 9, steps 1 and 2: the lines, the trailer set aside.
function splitLines(data) {
  if (data.length === 0) throw new Failure(1, "the log is empty");
  if (data[data.length - 1] !== 0x0a) {
    let count = 1;
    for (const b of data) if (b === 0x0a) count++;
    throw new Failure(count, "the line is cut short (no final newline): the log is incomplete");
  }
  const lines = [];
  let start = 0;
  for (let i = 0; i < data.length; i++) {
    if (data[i] === 0x0a) {
      lines.push(data.subarray(start, i));
      start = i + 1;
    }
  }
  let trailer = null;
  const last = lines[lines.length - 1];
  if (last.length >= TRAILER_PREFIX.length && last.subarray(0, TRAILER_PREFIX.length).equals(TRAILER_PREFIX)) {
    trailer = lines.pop();
  }
  if (lines.length === 0) throw new Failure(1, "the log holds no entry");
  return { lines, trailer };
}

function parseLine(bytes, number) {
  if (bytes.length > MAX_LINE_BYTES) throw new Failure(number, "a line longer than 1 MiB");
  let text;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new Failure(number, "not UTF-8");
  }
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Failure(number, `not JSON (${err.message})`);
  }
  if (!isObject(value)) throw new Failure(number, "not a JSON object");
  return value;
}

// Section 9, steps 3 and 4.
function checkEntries(lines) {
  let first = null;
  let prevHash = null;
  let prevTime = null;
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const entry = parseLine(lines[i], n);
    for (const key of Object.keys(entry)) {
      if (!ENTRY_FIELDS.includes(key)) throw new Failure(n, `LogEntry has no field ${JSON.stringify(key)}`);
    }
    if (first === null) first = entry;
    if (entry.seq !== String(n)) throw new Failure(n, `sequence number ${JSON.stringify(entry.seq)}, expected "${n}"`);
    if (typeof entry.match_id !== "string" || entry.match_id !== first.match_id) {
      throw new Failure(n, "the match id differs from line 1's");
    }
    if (entry.schema_version !== 1 && entry.schema_version !== 2) {
      throw new Failure(n, `unknown schema version ${JSON.stringify(entry.schema_version)}`);
    }
    if (entry.schema_version !== first.schema_version) throw new Failure(n, "the schema version differs from line 1's");
    if (n === 1) {
      if ("prev_hash" in entry) throw new Failure(n, "line 1 has a prev_hash");
    } else if (entry.prev_hash !== prevHash) {
      throw new Failure(n, "prev_hash is not the SHA-256 of the previous line");
    }
    prevHash = sha256Hex(lines[i]);
    const kind = oneKind(entry.event, EVENT_KINDS, n, "event");
    const time = parseTime(entry.time, n, "time");
    if (prevTime !== null && time < prevTime) throw new Failure(n, "the time goes back");
    if (entry.schema_version === 1) {
      if ("command" in entry) throw new Failure(n, "a command in a schema-1 log");
    } else if ("command" in entry) {
      const command = oneKind(entry.command, COMMAND_KINDS, n, "command");
      if ((command === "create") !== (n === 1)) throw new Failure(n, "the create command must be line 1's, and only its");
    } else if (n === 1) {
      throw new Failure(n, "line 1 has no command");
    } else if (time !== prevTime) {
      throw new Failure(n, "an entry of a decision at another time than the entry before it");
    }
    if (n === 1 && kind !== "match_created") throw new Failure(n, "the first event is not match_created");
    if (n === lines.length) {
      if (kind !== "match_ended") throw new Failure(n + 1, "the log ends before match_ended: it is incomplete");
      const seed = entry.event.match_ended.seed ?? "";
      const commitment = first.event.match_created.seed_commitment ?? "";
      if (sha256Hex(Buffer.from(seed, "utf8")) !== commitment) {
        throw new Failure(n, "the SHA-256 of the revealed seed is not match_created's seed_commitment");
      }
    }
    prevTime = time;
  }
  return { matchId: first.match_id, finalHash: prevHash };
}

// Section 6: the trailer signs this log, with the trusted key when there is one.
function checkTrailer(bytes, number, entries, count, trustedKey) {
  const line = parseLine(bytes, number);
  const keys = Object.keys(line);
  if (keys.length !== 1 || !isObject(line.trailer)) throw new Failure(number, "the trailer line holds more than a trailer");
  const t = line.trailer;
  for (const key of Object.keys(t)) {
    if (!TRAILER_FIELDS.includes(key)) throw new Failure(number, `LogTrailer has no field ${JSON.stringify(key)}`);
  }
  if (t.algorithm !== "ed25519") throw new Failure(number, `unknown signature algorithm ${JSON.stringify(t.algorithm)}`);
  if (t.match_id !== entries.matchId) throw new Failure(number, "the trailer names another match");
  if (typeof t.lines !== "string" || !DIGITS.test(t.lines) || t.lines !== String(count)) {
    throw new Failure(number, `the trailer signs ${JSON.stringify(t.lines)} lines, the log has ${count}`);
  }
  if (typeof t.final_hash !== "string" || !HEX64.test(t.final_hash) || t.final_hash !== entries.finalHash) {
    throw new Failure(number, "the trailer's final hash is not the SHA-256 of the last entry line");
  }
  const key = strictBase64(t.public_key);
  const signature = strictBase64(t.signature);
  if (key === null || key.length !== 32) throw new Failure(number, "the trailer's public key is not base64 of 32 bytes");
  if (signature === null || signature.length !== 64) throw new Failure(number, "the signature is not base64 of 64 bytes");
  if (trustedKey !== null && !key.equals(trustedKey)) {
    throw new Failure(number, "the log is signed by another key than the one given");
  }
  const message = Buffer.from(`${CONTEXT}\n${entries.matchId}\n${count}\n${entries.finalHash}`, "utf8");
  const publicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: key.toString("base64url") }, format: "jwk" });
  if (!verify(null, message, publicKey, signature)) {
    throw new Failure(number, "the signature does not match (the log was changed after it was signed)");
  }
  return t.public_key;
}

function verifyLog(path, trustedKey) {
  try {
    const { lines, trailer } = splitLines(readFileSync(path));
    const entries = checkEntries(lines);
    if (trailer === null) {
      if (trustedKey !== null) {
        return `UNSIGNED: ${path}: ${lines.length} entries check, but no signature trailer`;
      }
      return `OK: ${path}: ${lines.length} entries, unsigned`;
    }
    const signer = checkTrailer(trailer, lines.length + 1, entries, lines.length, trustedKey);
    return `OK: ${path}: ${lines.length} entries, signed by ${signer}`;
  } catch (err) {
    if (err instanceof Failure) return `FAILED: ${path}: line ${err.line}: ${err.message}`;
    if (err.code) return `FAILED: ${path}: cannot read the log: ${err.code}`;
    throw err;
  }
}

// --public-key: the base64 text, or a file holding it or a PEM public key (section 6).
function trustedKeyArgument(text) {
  let value = text;
  if (existsSync(text)) value = readFileSync(text, "utf8");
  if (value.includes("-----BEGIN")) {
    const jwk = createPublicKey(value).export({ format: "jwk" });
    if (jwk.crv !== "Ed25519") throw new Error("not an Ed25519 key");
    return Buffer.from(jwk.x, "base64url");
  }
  const raw = strictBase64(value.trim());
  if (raw === null || raw.length !== 32) throw new Error("expected base64 of 32 bytes, or PEM");
  return raw;
}

function main(argv) {
  let trustedKey = null;
  const logs = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--public-key") {
      try {
        trustedKey = trustedKeyArgument(argv[++i] ?? "");
      } catch (err) {
        console.error(`log_verify: --public-key: ${err.message}`);
        return 2;
      }
    } else {
      logs.push(argv[i]);
    }
  }
  if (logs.length === 0) {
    console.error("usage: node log_verify.mjs [--public-key KEY] LOG...");
    return 2;
  }
  let ok = true;
  for (const log of logs) {
    const verdict = verifyLog(log, trustedKey);
    console.log(verdict);
    ok &&= verdict.startsWith("OK: ");
  }
  return ok ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
