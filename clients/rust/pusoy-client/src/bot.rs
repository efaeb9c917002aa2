//! The bot interface: one method to write, a few hooks to override if useful.

use crate::{Choice, Prompt, Rejection, pb};

/// A bot. Implement [`choose`](Bot::choose); every other method has a default.
///
/// The library calls the methods on the bot's own thread, one at a time, in the order
/// the messages arrive, so a slow `choose` never stalls the connection. A panic in a
/// call is caught: the turn gets [`fallback`] and the bot plays on.
pub trait Bot: Send + 'static {
    /// The bot's name, sent in the Hello and shown in the referee's logs.
    fn name(&self) -> &str {
        "rust-bot"
    }

    /// Whether prompts should list every legal play (`Prompt::legal_plays`).
    fn want_legal_plays(&self) -> bool {
        true
    }

    /// Whether the budget may use the seat's time bank (docs/kits.md, section 2).
    fn use_time_bank(&self) -> bool {
        true
    }

    /// The answer to a prompt: cards to play, or a pass, due by `prompt.budget`.
    ///
    /// If it is still running when the budget runs out, the library sends [`fallback`]
    /// for this turn instead (and the late answer is dropped).
    fn choose(&mut self, prompt: &Prompt) -> Choice;

    /// What to send after the referee rejected an answer to `prompt` (called while
    /// `rejection.attempts_left > 0`). By default: [`fallback`].
    fn on_rejected(&mut self, prompt: &Prompt, rejection: &Rejection) -> Choice {
        let _ = rejection;
        fallback(prompt)
    }

    /// Called when the referee gives the seat (again, after a reconnect).
    fn on_welcome(&mut self, welcome: &pb::Welcome) {
        let _ = welcome;
    }

    /// Called with the seat's view after every Welcome (useful after a reconnect).
    fn on_snapshot(&mut self, snapshot: &pb::Snapshot) {
        let _ = snapshot;
    }

    /// Called for every event the seat sees (its own deal, plays, passes, hand ends...).
    fn on_event(&mut self, event: &pb::Event) {
        let _ = event;
    }
}

/// The safe answer (docs/kits.md, section 4): a pass when allowed, else the weakest
/// legal play, else (when the prompt lists no plays) the opening card, else the lowest
/// card of the hand.
pub fn fallback(prompt: &Prompt) -> Choice {
    if prompt.can_pass {
        return Choice::Pass;
    }
    if let Some(play) = prompt.legal_plays.first() {
        return Choice::from(play);
    }
    let must = &prompt.state.must_include;
    if !must.is_empty() && prompt.hand.contains(must) {
        return Choice::play([must.as_str()]);
    }
    match prompt.hand.first() {
        Some(card) => Choice::play([card.as_str()]),
        None => Choice::Pass,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::prompt;

    #[test]
    fn fallback_passes_when_it_can() {
        let prompt = prompt();
        assert!(prompt.can_pass);
        assert_eq!(fallback(&prompt), Choice::Pass);
    }

    #[test]
    fn fallback_plays_the_weakest_legal_play_when_it_must_play() {
        let mut prompt = prompt();
        prompt.can_pass = false;
        assert_eq!(fallback(&prompt), Choice::play(["5S"]));
    }

    #[test]
    fn fallback_without_legal_plays_leads_the_lowest_card() {
        let mut prompt = prompt();
        prompt.can_pass = false;
        prompt.legal_plays.clear();
        assert_eq!(fallback(&prompt), Choice::play(["3C"]));
    }

    #[test]
    fn default_rejection_hook_is_the_fallback() {
        struct Stubborn;
        impl Bot for Stubborn {
            fn choose(&mut self, _: &Prompt) -> Choice {
                Choice::play(["AS"])
            }
        }
        let mut prompt = prompt();
        prompt.can_pass = false;
        let rejection = Rejection {
            turn_id: prompt.turn_id,
            reason: pb::RejectionReason::CardNotInHand,
            message: String::new(),
            attempts_left: 2,
        };
        assert_eq!(
            Stubborn.on_rejected(&prompt, &rejection),
            Choice::play(["5S"])
        );
        assert_eq!(Stubborn.name(), "rust-bot");
        assert!(Stubborn.want_legal_plays());
    }
}
