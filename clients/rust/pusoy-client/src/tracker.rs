//! A seat's view of the match, kept from the welcome, the snapshot and the events. Feed
//! it from the bot's hooks and read it in `choose`. It starts again from every snapshot,
//! so it is right after a reconnect too. Checked against the referee's own
//! `PublicState` in `clients/conformance/tracker_streams.jsonl`.

use crate::pb::{self, event};
use crate::rules::Rules;

/// One action of the current trick.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrickEntry {
    /// Who acted.
    pub seat: u32,
    /// The cards played; empty for a pass.
    pub cards: Vec<String>,
}

/// Cards left per seat, cards played, the trick, the table, who is locked out.
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    /// This bot's seat (after the welcome).
    pub seat: Option<u32>,
    /// The rules in force.
    pub rules: Rules,
    /// Whether a pass locks a seat out of the trick.
    pub pass_locks_out: bool,
    /// The hand being played.
    pub hand_number: u32,
    /// This bot's cards.
    pub hand: Vec<String>,
    /// Cards left per seat.
    pub card_counts: Vec<u32>,
    /// Cards played this hand, in canonical order.
    pub played_cards: Vec<String>,
    /// The current trick, oldest first.
    pub trick: Vec<TrickEntry>,
    /// The play to beat (empty on a lead).
    pub table: Vec<String>,
    /// Who made it.
    pub table_seat: Option<u32>,
    /// Seats locked out of the trick.
    pub locked_out: Vec<bool>,
    /// A revolution is in force.
    pub revolution: bool,
    /// Match totals.
    pub totals: Vec<i32>,
    /// Hands won by each seat so far.
    pub hands_won: Vec<u32>,
}

impl Tracker {
    /// Takes the seat and the rules.
    pub fn on_welcome(&mut self, welcome: &pb::Welcome) {
        self.seat = Some(welcome.seat);
        let rules = welcome.config.as_ref().and_then(|c| c.rules.clone()).unwrap_or_default();
        self.rules = Rules::from_pb(&rules);
        self.pass_locks_out = rules.pass_locks_out;
    }

    /// Starts again from the seat's view.
    pub fn on_snapshot(&mut self, snapshot: &pb::Snapshot) {
        let st = snapshot.state.clone().unwrap_or_default();
        self.hand_number = st.hand_number;
        self.hand = snapshot.hand.clone();
        self.card_counts = or4(st.card_counts);
        self.played_cards = st.played_cards;
        self.trick = st
            .trick
            .iter()
            .map(|t| TrickEntry {
                seat: t.seat,
                cards: if t.pass { Vec::new() } else { t.play.as_ref().map(|p| p.cards.clone()).unwrap_or_default() },
            })
            .collect();
        self.table = st.table.map(|p| p.cards).unwrap_or_default();
        self.table_seat = st.table_seat;
        self.locked_out = if st.locked_out.is_empty() { vec![false; 4] } else { st.locked_out };
        self.revolution = st.revolution;
        self.totals = if st.totals.is_empty() { vec![0; 4] } else { st.totals };
        self.hands_won = or4(st.hands_won);
    }

    /// Keeps the view up to date.
    pub fn on_event(&mut self, e: &pb::Event) {
        match &e.kind {
            Some(event::Kind::HandDealt(d)) => {
                self.hand_number = d.hand_number;
                self.card_counts = vec![0; 4];
                for h in &d.hands {
                    self.card_counts[h.seat as usize] = h.count;
                    if Some(h.seat) == self.seat {
                        self.hand = h.cards.clone();
                    }
                }
                self.played_cards.clear();
                self.trick.clear();
                self.table.clear();
                self.table_seat = None;
                self.revolution = false;
                self.locked_out = vec![false; 4];
            }
            Some(event::Kind::Played(p)) => {
                let cards = p.play.as_ref().map(|x| x.cards.clone()).unwrap_or_default();
                if self.card_counts.len() < 4 {
                    self.card_counts = vec![0; 4];
                }
                self.card_counts[p.seat as usize] = p.cards_left;
                self.played_cards.extend(cards.iter().cloned());
                self.rules.sort_cards(&mut self.played_cards);
                self.trick.push(TrickEntry { seat: p.seat, cards: cards.clone() });
                if Some(p.seat) == self.seat {
                    self.hand.retain(|c| !cards.contains(c));
                }
                self.table = cards;
                self.table_seat = Some(p.seat);
                self.revolution = p.revolution;
            }
            Some(event::Kind::Passed(p)) => {
                self.trick.push(TrickEntry { seat: p.seat, cards: Vec::new() });
                if self.pass_locks_out && !p.forced_lead_pass && (p.seat as usize) < self.locked_out.len() {
                    self.locked_out[p.seat as usize] = true;
                }
            }
            Some(event::Kind::TrickCleared(_)) => {
                self.trick.clear();
                self.table.clear();
                self.table_seat = None;
                self.locked_out = vec![false; 4];
            }
            Some(event::Kind::HandEnded(h)) => {
                self.totals = h.totals.clone();
                if self.hands_won.len() < 4 {
                    self.hands_won = vec![0; 4];
                }
                if let Some(won) = self.hands_won.get_mut(h.winner as usize) {
                    *won += 1;
                }
            }
            _ => {}
        }
    }

    /// How many cards `seat` holds.
    pub fn cards_left(&self, seat: u32) -> u32 {
        self.card_counts.get(seat as usize).copied().unwrap_or(0)
    }
}

fn or4(v: Vec<u32>) -> Vec<u32> {
    if v.is_empty() { vec![0; 4] } else { v }
}
