//! `--misbehave`: a wrapper that breaks the rules on purpose, to show recovery.

use crate::cards::card_not_in_hand;
use crate::{Bot, Choice, Prompt, Rejection, pb};

/// Wraps a bot so that its first answer in each hand is a single card it does not hold.
/// The referee rejects it (CARD_NOT_IN_HAND) and the library recovers through
/// [`Bot::on_rejected`] of the wrapped bot. It behaves only when the turn has a single
/// attempt left, so the trick never costs a strike.
pub struct Misbehave<B> {
    inner: B,
    misbehaved_in_hand: Option<u32>,
}

impl<B> Misbehave<B> {
    /// Wraps `inner`.
    pub fn new(inner: B) -> Self {
        Misbehave {
            inner,
            misbehaved_in_hand: None,
        }
    }

    /// The wrapped bot.
    pub fn into_inner(self) -> B {
        self.inner
    }
}

impl<B: Bot> Bot for Misbehave<B> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn use_time_bank(&self) -> bool {
        self.inner.use_time_bank()
    }

    fn want_legal_plays(&self) -> bool {
        self.inner.want_legal_plays()
    }

    fn choose(&mut self, prompt: &Prompt) -> Choice {
        if self.misbehaved_in_hand != Some(prompt.hand_number) {
            self.misbehaved_in_hand = Some(prompt.hand_number);
            if prompt.attempts_left > 1 {
                return Choice::play([card_not_in_hand(&prompt.hand)]);
            }
        }
        self.inner.choose(prompt)
    }

    fn on_rejected(&mut self, prompt: &Prompt, rejection: &Rejection) -> Choice {
        self.inner.on_rejected(prompt, rejection)
    }

    fn on_welcome(&mut self, welcome: &pb::Welcome) {
        self.inner.on_welcome(welcome)
    }

    fn on_snapshot(&mut self, snapshot: &pb::Snapshot) {
        self.inner.on_snapshot(snapshot)
    }

    fn on_event(&mut self, event: &pb::Event) {
        self.inner.on_event(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::holds;
    use crate::testing::prompt;

    struct Lowest;
    impl Bot for Lowest {
        fn name(&self) -> &str {
            "lowest"
        }
        fn choose(&mut self, prompt: &Prompt) -> Choice {
            Choice::from(&prompt.legal_plays[0])
        }
    }

    #[test]
    fn first_answer_of_each_hand_is_a_card_not_in_hand() {
        let mut bot = Misbehave::new(Lowest);
        let mut prompt = prompt();
        let Choice::Play(cards) = bot.choose(&prompt) else {
            panic!("expected a play")
        };
        assert_eq!(cards.len(), 1);
        assert!(
            !holds(&prompt.hand, &cards[0]),
            "{cards:?} is in {:?}",
            prompt.hand
        );
        assert_eq!(cards, ["3S"]);

        // Later turns of the same hand: the wrapped bot decides.
        prompt.turn_id += 4;
        assert_eq!(bot.choose(&prompt), Choice::play(["5S"]));

        // The next hand: misbehave once more.
        prompt.hand_number += 1;
        assert!(matches!(bot.choose(&prompt), Choice::Play(c) if !holds(&prompt.hand, &c[0])));
        assert_eq!(bot.choose(&prompt), Choice::play(["5S"]));
        assert_eq!(bot.name(), "lowest");
    }

    #[test]
    fn never_misbehaves_on_a_last_attempt() {
        let mut bot = Misbehave::new(Lowest);
        let mut prompt = prompt();
        prompt.attempts_left = 1;
        assert_eq!(bot.choose(&prompt), Choice::play(["5S"]));
    }

    #[test]
    fn recovery_goes_through_the_wrapped_bots_hook() {
        let mut bot = Misbehave::new(Lowest);
        let mut prompt = prompt();
        prompt.can_pass = false;
        let rejection = Rejection {
            turn_id: prompt.turn_id,
            reason: pb::RejectionReason::CardNotInHand,
            message: "3S is not in your hand".into(),
            attempts_left: 2,
        };
        assert_eq!(bot.on_rejected(&prompt, &rejection), Choice::play(["5S"]));
    }
}
