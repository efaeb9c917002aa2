//! The messages a bot sends.

use crate::pb::{self, action, play_request};
use crate::{Choice, PROTOCOL_VERSION};

/// The first message of every stream: protocol version, seat token, bot name, and whether
/// the events come batched into the prompts (docs/protocol.md 3.5).
pub fn hello_request(
    token: &str,
    bot_name: &str,
    want_legal_plays: bool,
    batch_events: bool,
) -> pb::PlayRequest {
    pb::PlayRequest {
        kind: Some(play_request::Kind::Hello(pb::Hello {
            protocol_version: PROTOCOL_VERSION,
            token: token.to_owned(),
            want_legal_plays,
            bot_name: bot_name.to_owned(),
            batch_events,
        })),
    }
}

/// The answer to prompt `turn_id`: a play of the chosen cards, or a pass.
pub fn action_request(turn_id: u64, choice: &Choice) -> pb::PlayRequest {
    let kind = match choice {
        Choice::Pass => action::Kind::Pass(pb::Pass {}),
        Choice::Play(cards) => action::Kind::Play(pb::Cards {
            cards: cards.clone(),
        }),
    };
    pb::PlayRequest {
        kind: Some(play_request::Kind::Action(pb::Action {
            turn_id,
            kind: Some(kind),
            ..Default::default() // trace_sha256: a language-model seat's alone
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unwrap_action(request: pb::PlayRequest) -> pb::Action {
        match request.kind {
            Some(play_request::Kind::Action(action)) => action,
            other => panic!("not an action: {other:?}"),
        }
    }

    #[test]
    fn builds_a_play_action() {
        let action = unwrap_action(action_request(17, &Choice::play(["9D", "9S"])));
        assert_eq!(action.turn_id, 17);
        assert_eq!(
            action.kind,
            Some(action::Kind::Play(pb::Cards {
                cards: vec!["9D".into(), "9S".into()]
            }))
        );
    }

    #[test]
    fn builds_a_pass_action() {
        let action = unwrap_action(action_request(18, &Choice::Pass));
        assert_eq!(action.turn_id, 18);
        assert_eq!(action.kind, Some(action::Kind::Pass(pb::Pass {})));
    }

    #[test]
    fn actions_survive_the_wire() {
        use prost::Message;
        let request = action_request(5, &Choice::Pass);
        let bytes = request.encode_to_vec();
        assert_eq!(pb::PlayRequest::decode(bytes.as_slice()).unwrap(), request);
    }

    #[test]
    fn builds_the_hello() {
        let request = hello_request("tok", "rust-random", true, false);
        match request.kind {
            Some(play_request::Kind::Hello(hello)) => {
                assert_eq!(hello.protocol_version, 1);
                assert_eq!(hello.token, "tok");
                assert_eq!(hello.bot_name, "rust-random");
                assert!(hello.want_legal_plays);
                assert!(!hello.batch_events);
            }
            other => panic!("not a hello: {other:?}"),
        }
        match hello_request("tok", "b", true, true).kind {
            Some(play_request::Kind::Hello(hello)) => assert!(hello.batch_events),
            other => panic!("not a hello: {other:?}"),
        }
    }
}
