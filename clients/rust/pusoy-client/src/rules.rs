//! Cards and combinations under the rules in force: what a play is and what it beats.
//! The same answers as the referee's engine (docs/rules.md), checked against the
//! reference judge's verdicts in `clients/conformance/judge_cases.jsonl`.

use crate::pb;

const RANKS: &str = "3456789TJQKA2";
const SUITS: &str = "CSHD";
const SHIFT: i64 = 1 << 20; // five-card keys: category * SHIFT + key within the category

/// The options that decide what beats what (from `Welcome.config.rules`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rules {
    /// `clubs-low` or `diamonds-low`.
    pub suit_order: String,
    /// `wrap-high`, `wrap-low` or `none-with-two`.
    pub straights: String,
    /// `ranked` or `locked`.
    pub five_card_categories: String,
    /// Whether five-card plays exist.
    pub five_card_hands: bool,
    /// 3-4-5-6-7 beats every other straight.
    pub lowest_straight_beats_straights: bool,
    /// A four of a kind beats any play but a straight flush.
    pub bomb: bool,
}

impl Default for Rules {
    /// Pusoy Dos's.
    fn default() -> Self {
        Rules {
            suit_order: "clubs-low".into(),
            straights: "wrap-high".into(),
            five_card_categories: "ranked".into(),
            five_card_hands: true,
            lowest_straight_beats_straights: false,
            bomb: false,
        }
    }
}

/// A classified play: its kind (the judge's names: `single`, `pair`, `triple`,
/// `straight`, `flush`, `full_house`, `four_of_a_kind`, `straight_flush`) and key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Combo {
    /// What the play is.
    pub kind: &'static str,
    /// How many cards it has.
    pub size: usize,
    /// Its strength (larger is stronger, within a kind).
    pub key: i64,
}

/// The rank (0..12, 3 to 2) and suit (0..3, C S H D) of a card such as `9S` or `10h`.
pub fn parse_card(text: &str) -> Option<(usize, usize)> {
    let t = text.trim().to_ascii_uppercase().replace("10", "T");
    let mut chars = t.chars();
    let (r, s) = (chars.next()?, chars.next()?);
    if chars.next().is_some() {
        return None;
    }
    Some((RANKS.find(r)?, SUITS.find(s)?))
}

impl Rules {
    /// From a `pusoy.referee.v1.Rules` message.
    pub fn from_pb(rules: &pb::Rules) -> Self {
        let or = |v: &str, d: &str| if v.is_empty() { d.to_owned() } else { v.to_owned() };
        Rules {
            suit_order: or(&rules.suit_order, "clubs-low"),
            straights: or(&rules.straights, "wrap-high"),
            five_card_categories: or(&rules.five_card_categories, "ranked"),
            five_card_hands: rules.five_card_hands,
            lowest_straight_beats_straights: rules.lowest_straight_beats_straights,
            bomb: rules.bomb,
        }
    }

    fn suit_rank(&self, suit: usize) -> i64 {
        let order = if self.suit_order == "diamonds-low" { [1, 3, 2, 0] } else { [0, 1, 2, 3] };
        order[suit]
    }

    /// A card's strength (larger is stronger); -1 for a card that cannot be read.
    pub fn card_key(&self, card: &str, revolution: bool) -> i64 {
        match parse_card(card) {
            Some((rank, suit)) => eff(rank, revolution) * 4 + self.suit_rank(suit),
            None => -1,
        }
    }

    /// Sorts cards in ascending order under the rules (the referee's canonical order).
    pub fn sort_cards(&self, cards: &mut [String]) {
        cards.sort_by_key(|c| self.card_key(c, false));
    }

    fn sequences(&self) -> Vec<([usize; 5], usize)> {
        let normal: Vec<([usize; 5], usize)> =
            (0..8).map(|i| ([i, i + 1, i + 2, i + 3, i + 4], i + 4)).collect();
        match self.straights.as_str() {
            "none-with-two" => normal,
            "wrap-high" => {
                let mut v = normal;
                v.push(([11, 12, 0, 1, 2], 12));
                v.push(([12, 0, 1, 2, 3], 12));
                v
            }
            _ => {
                let mut v = vec![([11, 12, 0, 1, 2], 2), ([12, 0, 1, 2, 3], 3)];
                v.extend(normal);
                v
            }
        }
    }

    /// What the cards form under the rules, or `None` when they are no play.
    pub fn classify(&self, cards: &[String], revolution: bool) -> Option<Combo> {
        let parsed: Vec<(usize, usize)> = cards.iter().map(|c| parse_card(c)).collect::<Option<_>>()?;
        let mut seen = std::collections::HashSet::new();
        if !parsed.iter().all(|c| seen.insert(*c)) {
            return None;
        }
        let n = parsed.len();
        let mut counts = [0usize; 13];
        for (r, _) in &parsed {
            counts[*r] += 1;
        }
        let ranks: Vec<usize> = (0..13).filter(|r| counts[*r] > 0).collect();
        let combo = |kind, key| Some(Combo { kind, size: n, key });
        match n {
            1 => {
                let (r, s) = parsed[0];
                combo("single", eff(r, revolution) * 4 + self.suit_rank(s))
            }
            2 | 3 if ranks.len() == 1 => {
                let r = parsed[0].0;
                if n == 3 {
                    combo("triple", eff(r, revolution))
                } else {
                    let best = parsed.iter().map(|(_, s)| self.suit_rank(*s)).max()?;
                    combo("pair", eff(r, revolution) * 4 + best)
                }
            }
            5 if self.five_card_hands => {
                let flush = parsed.iter().all(|(_, s)| *s == parsed[0].1);
                if ranks.len() == 5 {
                    let seqs = self.sequences();
                    for (i, (seq, tie)) in seqs.iter().enumerate() {
                        if !seq.iter().all(|r| counts[*r] == 1) {
                            continue;
                        }
                        let mut order = if revolution { seqs.len() - 1 - i } else { i } as i64;
                        let flush_order = order;
                        if self.lowest_straight_beats_straights && *seq == [0, 1, 2, 3, 4] {
                            order = seqs.len() as i64;
                        }
                        let tie_suit = parsed.iter().find(|(r, _)| r == tie)?.1;
                        return if flush {
                            combo("straight_flush", 4 * SHIFT + flush_order * 4 + self.suit_rank(tie_suit))
                        } else {
                            combo("straight", order * 4 + self.suit_rank(tie_suit))
                        };
                    }
                    if flush {
                        let eff_ranks: i64 = ranks.iter().map(|r| 1i64 << eff(*r, revolution)).sum();
                        return combo("flush", SHIFT + (self.suit_rank(parsed[0].1) << 13) + eff_ranks);
                    }
                    None
                } else if ranks.len() == 2 {
                    let triple = ranks.iter().find(|r| counts[**r] == 3);
                    let quad = ranks.iter().find(|r| counts[**r] == 4);
                    match (triple, quad) {
                        (Some(r), _) => combo("full_house", 2 * SHIFT + eff(*r, revolution)),
                        (_, Some(r)) => combo("four_of_a_kind", 3 * SHIFT + eff(*r, revolution)),
                        _ => None,
                    }
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Whether `play` may answer `table` (size, category and strength rules).
    pub fn beats(&self, play: &[String], table: &[String], revolution: bool) -> bool {
        let (Some(p), Some(t)) = (self.classify(play, revolution), self.classify(table, revolution)) else {
            return false;
        };
        if self.bomb && p.kind == "four_of_a_kind" {
            return match t.kind {
                "straight_flush" => false,
                "four_of_a_kind" => p.key > t.key,
                _ => true,
            };
        }
        if p.size != t.size {
            return false;
        }
        if self.five_card_categories == "locked" && p.kind != t.kind {
            return false;
        }
        p.key > t.key
    }
}

fn eff(rank: usize, revolution: bool) -> i64 {
    if revolution { 12 - rank as i64 } else { rank as i64 }
}
