// An independent implementation of the seeded deal, written from docs/deals.md, checked
// against docs/deal-vectors.json. Usage: node deal_vectors_check.mjs path/to/deal-vectors.json
// Prints one line per mismatch and exits 1 if any vector disagrees.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

const DOMAIN = Buffer.from("pusoy-referee/deal/v1", "ascii");
const RANKS = "3456789TJQKA2";
const SUITS = "CSHD";

function u32be(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
}

function sha256(buf) {
  return createHash("sha256").update(buf).digest();
}

function blockInput(seedBytes, handNumber, counter) {
  return Buffer.concat([DOMAIN, u32be(seedBytes.length), seedBytes, u32be(handNumber), u32be(counter)]);
}

// The stream of 32-bit big-endian words: eight per SHA-256 block, blocks numbered from 0.
function* words(seedBytes, handNumber) {
  for (let counter = 0; ; counter++) {
    const block = sha256(blockInput(seedBytes, handNumber, counter));
    for (let k = 0; k < 32; k += 4) yield block.readUInt32BE(k);
  }
}

function shuffle(seed, handNumber) {
  const seedBytes = Buffer.from(seed, "utf8");
  const deck = Array.from({ length: 52 }, (_, id) => id);
  const stream = words(seedBytes, handNumber);
  const TWO32 = 2 ** 32; // plain doubles are exact up to 2**53
  let drawn = 0;
  let rejected = 0;
  for (let i = 51; i >= 1; i--) {
    const bound = i + 1;
    const limit = TWO32 - (TWO32 % bound);
    let x;
    for (;;) {
      x = stream.next().value;
      drawn++;
      if (x < limit) break;
      rejected++;
    }
    const j = x % bound;
    [deck[i], deck[j]] = [deck[j], deck[i]];
  }
  return { deck, drawn, rejected };
}

const cardText = (id) => RANKS[id >> 2] + SUITS[id & 3];

function check(v) {
  const problems = [];
  const expect = (what, got, want) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      problems.push(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    }
  };
  const seedBytes = Buffer.from(v.seed, "utf8");
  expect("seed_utf8_hex", seedBytes.toString("hex"), v.seed_utf8_hex);
  expect("seed_commitment", sha256(seedBytes).toString("hex"), v.seed_commitment);
  expect("block0_sha256", sha256(blockInput(seedBytes, v.hand_number, 0)).toString("hex"), v.block0_sha256);
  const { deck, drawn, rejected } = shuffle(v.seed, v.hand_number);
  expect("words_drawn", drawn, v.words_drawn);
  expect("rejected_draws", rejected, v.rejected_draws);
  expect("dealt", deck, v.dealt);
  expect("dealt_text", deck.map(cardText).join(" "), v.dealt_text);
  const hands = [0, 1, 2, 3].map((s) =>
    deck.slice(13 * s, 13 * s + 13).sort((a, b) => a - b).map(cardText).join(" "),
  );
  expect("hands", hands, v.hands);
  return problems;
}

const path = process.argv[2];
if (!path) {
  console.error("usage: node deal_vectors_check.mjs docs/deal-vectors.json");
  process.exit(2);
}
const doc = JSON.parse(readFileSync(path, "utf8"));
let failed = 0;
for (const v of doc.vectors) {
  const problems = check(v);
  if (problems.length) {
    failed++;
    for (const p of problems) console.log(`FAIL ${v.name}: ${p}`);
  }
}
console.log(`node deal check: ${doc.vectors.length - failed} of ${doc.vectors.length} vectors agree`);
process.exit(failed ? 1 : 0);
