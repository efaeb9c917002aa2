//! Test fixtures shared by the unit tests.

use std::time::{Duration, SystemTime};

use crate::{Prompt, pb};

/// A raw prompt: turn 42, seat 2, hand 3 of match "m-1", a single 4D on the table.
pub(crate) fn raw_prompt() -> pb::TurnPrompt {
    let single = pb::Combination::Single as i32;
    pb::TurnPrompt {
        turn_id: 42,
        seat: 2,
        deadline: Some(prost_types::Timestamp {
            seconds: 1_700_000_000,
            nanos: 500_000_000,
        }),
        turn_time_ms: 2000,
        time_bank_ms: 1500,
        state: Some(pb::PublicState {
            match_id: "m-1".into(),
            hand_number: 3,
            turn: Some(2),
            table: Some(pb::Play {
                cards: vec!["4D".into()],
                combination: single,
            }),
            table_seat: Some(1),
            card_counts: vec![13, 12, 13, 13],
            ..Default::default()
        }),
        hand: vec!["3C".into(), "5S".into(), "5H".into(), "2D".into()],
        legal_plays: vec![
            pb::Play {
                cards: vec!["5S".into()],
                combination: single,
            },
            pb::Play {
                cards: vec!["5H".into()],
                combination: single,
            },
            pb::Play {
                cards: vec!["2D".into()],
                combination: single,
            },
        ],
        can_pass: true,
        attempts_left: 3,
        is_lead: false,
        events: vec![],
    }
}

/// The view of [`raw_prompt`], with a deadline ten seconds from now.
pub(crate) fn prompt() -> Prompt {
    let mut prompt = Prompt::from(raw_prompt());
    prompt.deadline = SystemTime::now() + Duration::from_secs(10);
    prompt
}
