/**
 * Cards and combinations under the rules in force: what a play is and what it beats. The
 * same answers as the referee's engine (docs/rules.md), checked against the reference
 * judge's verdicts in clients/conformance/judge_cases.jsonl.
 */

export const RANKS = "3456789TJQKA2";
export const SUITS = "CSHD";
/** Strength of the suits C, S, H, D under each suit order (0 weakest). */
const SUIT_RANKS: Record<string, readonly number[]> = { "clubs-low": [0, 1, 2, 3], "diamonds-low": [1, 3, 2, 0] };
const NORMAL: number[][] = Array.from({ length: 8 }, (_, i) => [i, i + 1, i + 2, i + 3, i + 4]);
const A2345 = [11, 12, 0, 1, 2];
const T23456 = [12, 0, 1, 2, 3];

/** The options that decide what beats what (from `Welcome.config.rules`). */
export interface Rules {
  suitOrder: string;
  straights: string;
  fiveCardCategories: string;
  fiveCardHands: boolean;
  lowestStraightBeatsStraights: boolean;
  bomb: boolean;
}

export const DEFAULT_RULES: Rules = {
  suitOrder: "clubs-low",
  straights: "wrap-high",
  fiveCardCategories: "ranked",
  fiveCardHands: true,
  lowestStraightBeatsStraights: false,
  bomb: false,
};

/** From a `pusoy.referee.v1.Rules` message (or any object with some of its fields). */
export function rulesFrom(pb: Partial<Rules> | undefined): Rules {
  return {
    suitOrder: pb?.suitOrder || DEFAULT_RULES.suitOrder,
    straights: pb?.straights || DEFAULT_RULES.straights,
    fiveCardCategories: pb?.fiveCardCategories || DEFAULT_RULES.fiveCardCategories,
    fiveCardHands: pb?.fiveCardHands ?? true,
    lowestStraightBeatsStraights: pb?.lowestStraightBeatsStraights ?? false,
    bomb: pb?.bomb ?? false,
  };
}

function sequences(rules: Rules): [number[], number][] {
  const normal = NORMAL.map((s): [number[], number] => [s, s[4]!]);
  if (rules.straights === "none-with-two") return normal;
  if (rules.straights === "wrap-high") return [...normal, [A2345, 12], [T23456, 12]];
  return [[A2345, 2], [T23456, 3], ...normal];
}

/** [rank 0..12, suit 0..3 as C S H D] of a card such as "9S", "10h" or "2♠". */
export function parseCard(text: string): [number, number] {
  const t = text.trim().toUpperCase().replace("10", "T").replace("♣", "C").replace("♠", "S").replace("♥", "H").replace("♦", "D");
  const rank = RANKS.indexOf(t[0] ?? "?");
  const suit = SUITS.indexOf(t[1] ?? "?");
  if (t.length !== 2 || rank < 0 || suit < 0) throw new RangeError(`not a card: ${JSON.stringify(text)}`);
  return [rank, suit];
}

/** A card's strength (larger is stronger). */
export function cardKey(rules: Rules, card: string, revolution = false): number {
  const [rank, suit] = parseCard(card);
  return (revolution ? 12 - rank : rank) * 4 + SUIT_RANKS[rules.suitOrder]![suit]!;
}

/** Cards in ascending order under the rules (the referee's canonical order). */
export function sortCards(rules: Rules, cards: Iterable<string>, revolution = false): string[] {
  return [...cards].sort((a, b) => cardKey(rules, a, revolution) - cardKey(rules, b, revolution));
}

/** A classified play: its kind (the judge's names), cards and strength key. */
export interface Combo {
  kind: "single" | "pair" | "triple" | "straight" | "flush" | "full_house" | "four_of_a_kind" | "straight_flush";
  cards: readonly string[];
  key: number;
}

const SHIFT = 2 ** 20; // five-card keys: category * SHIFT + key within the category

/** The combination the cards form, or undefined when they are no play. */
export function classify(rules: Rules, cards: readonly string[], revolution = false): Combo | undefined {
  const parsed = cards.map(parseCard);
  if (new Set(parsed.map(([r, s]) => r * 4 + s)).size !== parsed.length) throw new RangeError(`a card is repeated: ${cards.join(" ")}`);
  const sr = SUIT_RANKS[rules.suitOrder]!;
  const eff = (r: number) => (revolution ? 12 - r : r);
  const n = parsed.length;
  const ranks = new Set(parsed.map(([r]) => r));
  if (n === 1) {
    const [r, s] = parsed[0]!;
    return { kind: "single", cards, key: eff(r) * 4 + sr[s]! };
  }
  if (n === 2 || n === 3) {
    if (ranks.size !== 1) return undefined;
    const r = parsed[0]![0];
    if (n === 3) return { kind: "triple", cards, key: eff(r) };
    return { kind: "pair", cards, key: eff(r) * 4 + Math.max(...parsed.map(([, s]) => sr[s]!)) };
  }
  if (n !== 5 || !rules.fiveCardHands) return undefined;
  const counts = new Map<number, number>();
  for (const [r] of parsed) counts.set(r, (counts.get(r) ?? 0) + 1);
  const flush = new Set(parsed.map(([, s]) => s)).size === 1;
  if (counts.size === 5) {
    const seqs = sequences(rules);
    for (let i = 0; i < seqs.length; i++) {
      const [seq, tie] = seqs[i]!;
      if (!seq.every((r) => ranks.has(r))) continue;
      let order = revolution ? seqs.length - 1 - i : i;
      const flushOrder = order;
      if (rules.lowestStraightBeatsStraights && seq === NORMAL[0]) order = seqs.length;
      const tieSuit = parsed.find(([r]) => r === tie)![1];
      if (flush) return { kind: "straight_flush", cards, key: 4 * SHIFT + flushOrder * 4 + sr[tieSuit]! };
      return { kind: "straight", cards, key: order * 4 + sr[tieSuit]! };
    }
    if (flush) {
      let effRanks = 0;
      for (const r of ranks) effRanks += 2 ** eff(r);
      return { kind: "flush", cards, key: SHIFT + sr[parsed[0]![1]]! * 2 ** 13 + effRanks };
    }
    return undefined;
  }
  if (counts.size === 2) {
    const [[r1, c1], [r2]] = [...counts.entries()] as [[number, number], [number, number]];
    if (c1 === 3 || c1 === 2) return { kind: "full_house", cards, key: 2 * SHIFT + eff(c1 === 3 ? r1 : r2) };
    return { kind: "four_of_a_kind", cards, key: 3 * SHIFT + eff(c1 === 4 ? r1 : r2) };
  }
  return undefined;
}

/** Whether `play` may answer `table` (size, category and strength rules). */
export function beats(rules: Rules, play: readonly string[], table: readonly string[], revolution = false): boolean {
  const p = classify(rules, play, revolution);
  const t = classify(rules, table, revolution);
  if (p === undefined || t === undefined) return false;
  if (rules.bomb && p.kind === "four_of_a_kind") {
    if (t.kind === "straight_flush") return false;
    return t.kind === "four_of_a_kind" ? p.key > t.key : true;
  }
  if (p.cards.length !== t.cards.length) return false;
  if (rules.fiveCardCategories === "locked" && p.kind !== t.kind) return false;
  return p.key > t.key;
}
