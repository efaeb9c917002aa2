//! ─── YOUR BOT'S LOGIC GOES HERE ────────────────────────────────────────────────
//!
//! `MyBot::choose` gets a [`Prompt`] (your hand, the legal plays weakest first, whether
//! you may pass, the table and scores in `prompt.state`) and returns a [`Choice`]:
//! `Choice::play(["9D", "9S"])` or `Choice::Pass`. That is all a bot needs. The library
//! does the rest: connecting, answering before the deadline (if `choose` runs late it
//! sends `pusoy_client::fallback`), retrying after a rejection, reconnecting.
//!
//! Optional hooks of the `Bot` trait: `on_rejected` (what to send after a rejected
//! answer; default: the fallback), `on_event` (every public event, e.g. to count the
//! cards played), `on_welcome`, `on_snapshot`.
//!
//! The library's `Tracker` follows the match from the hooks, and `Rules` compares plays
//! under the rules in force. This sample plays uniformly at random among the legal
//! plays, pass included when it is allowed, except when an opponent has one card left:
//! then it plays its strongest play.

use pusoy_client::{Bot, Choice, Prompt, Tracker, fallback, pb};

use crate::rng::Rng;

/// The bot. Keep whatever state your logic needs in here.
pub struct MyBot {
    rng: Rng,
    tracker: Tracker,
}

impl MyBot {
    pub fn new() -> Self {
        MyBot {
            rng: Rng::from_entropy(),
            tracker: Tracker::default(),
        }
    }

    /// The legal play with the most cards, then the highest key.
    fn strongest(&self, prompt: &Prompt) -> Choice {
        let t = &self.tracker;
        let score = |cards: &Vec<String>| {
            let key = t.rules.classify(cards, t.revolution).map_or(-1, |c| c.key);
            ((cards.len() as i64) << 24) + key
        };
        prompt
            .legal_plays
            .iter()
            .max_by_key(|p| score(&p.cards))
            .map_or(Choice::Pass, Choice::from)
    }
}

impl Bot for MyBot {
    fn name(&self) -> &str {
        "rust-random"
    }

    fn on_welcome(&mut self, welcome: &pb::Welcome) {
        self.tracker.on_welcome(welcome);
    }

    fn on_snapshot(&mut self, snapshot: &pb::Snapshot) {
        self.tracker.on_snapshot(snapshot);
    }

    fn on_event(&mut self, event: &pb::Event) {
        self.tracker.on_event(event);
    }

    fn choose(&mut self, prompt: &Prompt) -> Choice {
        if prompt.legal_plays.is_empty() {
            return fallback(prompt); // a pass: the only legal action
        }
        if (0..4).any(|s| s != prompt.seat && self.tracker.cards_left(s) == 1) {
            return self.strongest(prompt);
        }
        let options = prompt.legal_plays.len() + usize::from(prompt.can_pass);
        match prompt.legal_plays.get(self.rng.below(options)) {
            Some(play) => Choice::from(play),
            None => Choice::Pass, // the extra option past the plays
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pusoy_client::pb;

    fn prompt(plays: &[&[&str]], can_pass: bool) -> Prompt {
        Prompt::from(pb::TurnPrompt {
            turn_id: 1,
            hand: vec!["3C".into(), "3D".into(), "4H".into()],
            legal_plays: plays
                .iter()
                .map(|cards| pb::Play {
                    cards: cards.iter().map(|c| c.to_string()).collect(),
                    combination: pb::Combination::Single as i32,
                })
                .collect(),
            can_pass,
            attempts_left: 3,
            ..Default::default()
        })
    }

    fn tally(prompt: &Prompt) -> std::collections::HashMap<Choice, u32> {
        let mut bot = MyBot {
            rng: Rng::with_seed(42),
            tracker: Tracker::default(),
        };
        let mut counts = std::collections::HashMap::new();
        for _ in 0..3000 {
            *counts.entry(bot.choose(prompt)).or_default() += 1;
        }
        counts
    }

    #[test]
    fn picks_uniformly_among_plays_and_the_pass() {
        let counts = tally(&prompt(&[&["3D"], &["4H"]], true));
        assert_eq!(counts.len(), 3, "{counts:?}");
        assert!(
            counts.values().all(|&n| (850..1150).contains(&n)),
            "{counts:?}"
        );
        assert!(counts.contains_key(&Choice::Pass));
    }

    #[test]
    fn never_passes_when_it_must_play() {
        let counts = tally(&prompt(&[&["3C"], &["3C", "3D"]], false));
        assert!(!counts.contains_key(&Choice::Pass));
        assert_eq!(counts.len(), 2);
    }

    #[test]
    fn without_listed_plays_it_falls_back() {
        let mut bot = MyBot::new();
        assert_eq!(bot.choose(&prompt(&[], false)), Choice::play(["3C"]));
        assert_eq!(bot.choose(&prompt(&[], true)), Choice::Pass);
    }
}
