//! The library's view of a prompt, and the bot's answer.

use std::time::{Duration, Instant, SystemTime};

use crate::pb;

/// A legal play listed in a prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegalPlay {
    /// The cards, in canonical order, e.g. `["9D", "9S"]`.
    pub cards: Vec<String>,
    /// What they form.
    pub combination: pb::Combination,
}

/// The time left to answer a prompt, on the monotonic clock: min(deadline, receipt +
/// turn time) + the time bank - the safety margin (docs/kits.md, section 2). Past it the
/// library has sent [`fallback`](crate::fallback) and drops the late answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// When the answer is due.
    pub deadline: Instant,
}

impl Budget {
    /// Time left (zero once expired).
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Whether the answer is overdue.
    pub fn expired(&self) -> bool {
        Instant::now() >= self.deadline
    }
}

/// The turn time assumed for a prompt with neither a deadline nor a turn time.
pub const DEFAULT_TURN_TIME: Duration = Duration::from_secs(5);

/// The seat must act: everything a bot needs to answer, from one `TurnPrompt`.
#[derive(Clone, Debug, PartialEq)]
pub struct Prompt {
    /// When the answer is due: [`Budget::remaining`].
    pub budget: Budget,
    /// The id the answer must name (the library does this).
    pub turn_id: u64,
    /// The seat to act: this bot's seat.
    pub seat: u32,
    /// When the turn ends (time bank excluded). The library sends [`fallback`](crate::fallback)
    /// if [`Bot::choose`](crate::Bot::choose) is still running shortly before this.
    pub deadline: SystemTime,
    /// The per-turn limit.
    pub turn_time: Duration,
    /// The seat's time bank left, drawn on by the referee when a turn runs over.
    pub time_bank: Duration,
    /// The seat's cards, ascending in card order, e.g. `["3C", "7H", "TD", "2S"]`.
    pub hand: Vec<String>,
    /// Every legal play, weakest first (empty if the bot did not ask for them).
    pub legal_plays: Vec<LegalPlay>,
    /// Whether a pass is legal.
    pub can_pass: bool,
    /// Whether this is a lead (the table is empty).
    pub is_lead: bool,
    /// Rejected attempts left in this turn before the referee plays a default action.
    pub attempts_left: u32,
    /// The hand being played, from 1.
    pub hand_number: u32,
    /// The public state: the table, card counts, the current trick, scores...
    pub state: pb::PublicState,
}

impl Prompt {
    /// Reads a `TurnPrompt` received at `received_at`, with a budget from now, a 50 ms
    /// margin and the time bank.
    pub fn from_pb(prompt: pb::TurnPrompt, received_at: SystemTime) -> Self {
        Prompt::received(prompt, Instant::now(), received_at, Duration::from_millis(50), true)
    }

    /// Reads a `TurnPrompt` read off the stream at `received` (monotonic) when the wall
    /// clock said `wall`, with its budget.
    pub fn received(
        prompt: pb::TurnPrompt,
        received: Instant,
        wall: SystemTime,
        margin: Duration,
        use_time_bank: bool,
    ) -> Self {
        let turn_time = Duration::from_millis(prompt.turn_time_ms.into());
        let referee_deadline = prompt.deadline.and_then(|ts| SystemTime::try_from(ts).ok());
        let deadline = referee_deadline.unwrap_or(wall + turn_time);
        let span = match referee_deadline {
            Some(d) => {
                let until = d.duration_since(wall).unwrap_or(Duration::ZERO);
                if turn_time.is_zero() { until } else { until.min(turn_time) }
            }
            None if turn_time.is_zero() => DEFAULT_TURN_TIME,
            None => turn_time,
        };
        let bank = if use_time_bank {
            Duration::from_millis(prompt.time_bank_ms.into())
        } else {
            Duration::ZERO
        };
        let budget = Budget {
            deadline: (received + span + bank).checked_sub(margin).unwrap_or(received),
        };
        let state = prompt.state.unwrap_or_default();
        Prompt {
            budget,
            turn_id: prompt.turn_id,
            seat: prompt.seat,
            deadline,
            turn_time,
            time_bank: Duration::from_millis(prompt.time_bank_ms.into()),
            hand: prompt.hand,
            legal_plays: prompt
                .legal_plays
                .into_iter()
                .map(|play| LegalPlay {
                    combination: pb::Combination::try_from(play.combination)
                        .unwrap_or(pb::Combination::Unspecified),
                    cards: play.cards,
                })
                .collect(),
            can_pass: prompt.can_pass,
            is_lead: prompt.is_lead,
            attempts_left: prompt.attempts_left,
            hand_number: state.hand_number,
            state,
        }
    }

    /// The play on the table, if any (none on a lead).
    pub fn table(&self) -> Option<&pb::Play> {
        self.state
            .table
            .as_ref()
            .filter(|play| !play.cards.is_empty())
    }

    /// Time left before the deadline (zero once it has passed).
    pub fn time_left(&self) -> Duration {
        self.deadline
            .duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO)
    }
}

impl From<pb::TurnPrompt> for Prompt {
    fn from(prompt: pb::TurnPrompt) -> Self {
        Prompt::from_pb(prompt, SystemTime::now())
    }
}

/// A bot's answer to a prompt.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Choice {
    /// Pass (only legal when [`Prompt::can_pass`]).
    Pass,
    /// Play these cards, e.g. `Choice::play(["9D", "9S"])`. Any order and case; the
    /// referee also reads "10" for "T".
    Play(Vec<String>),
}

impl Choice {
    /// A play of these cards.
    pub fn play<I, S>(cards: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Choice::Play(cards.into_iter().map(Into::into).collect())
    }

    /// Whether this is a pass.
    pub fn is_pass(&self) -> bool {
        matches!(self, Choice::Pass)
    }
}

impl From<&LegalPlay> for Choice {
    fn from(play: &LegalPlay) -> Self {
        Choice::Play(play.cards.clone())
    }
}

/// The referee refused an action; the bot may try again while `attempts_left > 0`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The turn the action named.
    pub turn_id: u64,
    /// Why.
    pub reason: pb::RejectionReason,
    /// A human-readable explanation.
    pub message: String,
    /// Rejected attempts left in this turn.
    pub attempts_left: u32,
}

impl From<pb::ActionResult> for Rejection {
    fn from(result: pb::ActionResult) -> Self {
        Rejection {
            turn_id: result.turn_id,
            reason: pb::RejectionReason::try_from(result.reason)
                .unwrap_or(pb::RejectionReason::Unspecified),
            message: result.message,
            attempts_left: result.attempts_left,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::raw_prompt as sample_prompt;

    #[test]
    fn parses_a_prompt_into_the_view() {
        let received = SystemTime::UNIX_EPOCH + Duration::from_secs(1_699_999_999);
        let prompt = Prompt::from_pb(sample_prompt(), received);
        assert_eq!(prompt.turn_id, 42);
        assert_eq!(prompt.seat, 2);
        assert_eq!(
            prompt.deadline,
            SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_500)
        );
        assert_eq!(prompt.turn_time, Duration::from_secs(2));
        assert_eq!(prompt.time_bank, Duration::from_millis(1500));
        assert_eq!(prompt.hand, ["3C", "5S", "5H", "2D"]);
        assert_eq!(prompt.legal_plays.len(), 3);
        assert_eq!(prompt.legal_plays[0].cards, ["5S"]);
        assert_eq!(prompt.legal_plays[2].combination, pb::Combination::Single);
        assert!(prompt.can_pass);
        assert!(!prompt.is_lead);
        assert_eq!(prompt.attempts_left, 3);
        assert_eq!(prompt.hand_number, 3);
        assert_eq!(prompt.state.card_counts, [13, 12, 13, 13]);
        assert_eq!(
            prompt.table().map(|t| t.cards.clone()),
            Some(vec!["4D".to_string()])
        );
    }

    #[test]
    fn a_prompt_without_deadline_gets_one_turn_from_receipt() {
        let mut raw = sample_prompt();
        raw.deadline = None;
        raw.state = None;
        let received = SystemTime::UNIX_EPOCH + Duration::from_secs(100);
        let prompt = Prompt::from_pb(raw, received);
        assert_eq!(prompt.deadline, received + Duration::from_secs(2));
        assert_eq!(prompt.hand_number, 0);
        assert_eq!(prompt.table(), None);
    }

    #[test]
    fn unknown_combination_values_read_as_unspecified() {
        let mut raw = sample_prompt();
        raw.legal_plays[0].combination = 99;
        let prompt = Prompt::from(raw);
        assert_eq!(
            prompt.legal_plays[0].combination,
            pb::Combination::Unspecified
        );
    }

    #[test]
    fn choices_from_cards_and_legal_plays() {
        assert_eq!(
            Choice::play(["3C", "3D"]),
            Choice::Play(vec!["3C".into(), "3D".into()])
        );
        let play = LegalPlay {
            cards: vec!["7H".into()],
            combination: pb::Combination::Single,
        };
        assert_eq!(Choice::from(&play), Choice::play(["7H"]));
        assert!(Choice::Pass.is_pass());
        assert!(!Choice::play(["7H"]).is_pass());
    }

    #[test]
    fn rejection_from_an_action_result() {
        let rejection = Rejection::from(pb::ActionResult {
            turn_id: 7,
            accepted: false,
            reason: pb::RejectionReason::CardNotInHand as i32,
            message: "AS is not in your hand".into(),
            attempts_left: 2,
        });
        assert_eq!(rejection.reason, pb::RejectionReason::CardNotInHand);
        assert_eq!(rejection.attempts_left, 2);
        assert_eq!(rejection.turn_id, 7);
    }
}
