//! The comparator and the tracker against the referee's own answers (the conformance data
//! in clients/conformance).

use std::path::PathBuf;

use pusoy_client::pb::{self, event};
use pusoy_client::{Rules, Tracker};
use serde_json::Value;

fn lines(name: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../conformance").join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map_or(Vec::new(), |a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
}

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array().map_or(Vec::new(), |a| a.iter().map(|x| x.as_u64().unwrap_or(0) as u32).collect())
}

fn num(v: &Value, key: &str) -> u32 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0) as u32
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

#[test]
fn the_comparator_gives_the_reference_judges_verdicts() {
    let cases = lines("judge_cases.jsonl");
    assert!(cases.len() > 1000);
    for c in &cases {
        let r = &c["rules"];
        let rules = Rules {
            suit_order: r["suit_order"].as_str().unwrap().into(),
            straights: r["straights"].as_str().unwrap().into(),
            five_card_categories: r["five_card_categories"].as_str().unwrap().into(),
            five_card_hands: flag(r, "five_card_hands"),
            lowest_straight_beats_straights: flag(r, "lowest_straight_beats_straights"),
            bomb: flag(r, "bomb"),
        };
        let revolution = flag(c, "revolution");
        let play = strings(&c["play"]);
        let combo = rules.classify(&play, revolution);
        assert_eq!(combo.as_ref().map(|x| x.kind), c["combination"].as_str(), "{c}");
        if c["table"].is_null() {
            assert_eq!(combo.is_some(), flag(c, "legal"), "{c}");
        } else if combo.is_some() {
            assert_eq!(rules.beats(&play, &strings(&c["table"]), revolution), flag(c, "legal"), "{c}");
        }
    }
}

fn play_of(v: &Value) -> Option<pb::Play> {
    v.get("cards").map(|_| pb::Play { cards: strings(&v["cards"]), ..Default::default() })
}

fn state_of(v: &Value) -> pb::PublicState {
    pb::PublicState {
        hand_number: num(v, "hand_number"),
        card_counts: u32s(&v["card_counts"]),
        played_cards: strings(&v["played_cards"]),
        table: v.get("table").and_then(play_of),
        table_seat: v.get("table_seat").map(|s| s.as_u64().unwrap() as u32),
        locked_out: v["locked_out"].as_array().map_or(Vec::new(), |a| a.iter().map(|x| x.as_bool().unwrap()).collect()),
        revolution: flag(v, "revolution"),
        totals: v["totals"].as_array().map_or(Vec::new(), |a| a.iter().map(|x| x.as_i64().unwrap() as i32).collect()),
        trick: v["trick"].as_array().map_or(Vec::new(), |a| {
            a.iter()
                .map(|t| pb::TrickPlay { seat: num(t, "seat"), play: t.get("play").and_then(play_of), pass: flag(t, "pass") })
                .collect()
        }),
        ..Default::default()
    }
}

fn event_of(v: &Value) -> pb::Event {
    let kind = if let Some(d) = v.get("hand_dealt") {
        event::Kind::HandDealt(pb::HandDealt {
            hand_number: num(d, "hand_number"),
            hands: d["hands"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| pb::SeatCards { seat: num(h, "seat"), cards: strings(&h["cards"]), count: num(h, "count") })
                .collect(),
            ..Default::default()
        })
    } else if let Some(p) = v.get("played") {
        event::Kind::Played(pb::Played {
            seat: num(p, "seat"),
            play: play_of(&p["play"]),
            cards_left: num(p, "cards_left"),
            revolution: flag(p, "revolution"),
            ..Default::default()
        })
    } else if let Some(p) = v.get("passed") {
        event::Kind::Passed(pb::Passed { seat: num(p, "seat"), forced_lead_pass: flag(p, "forced_lead_pass"), ..Default::default() })
    } else if v.get("trick_cleared").is_some() {
        event::Kind::TrickCleared(Default::default())
    } else if let Some(h) = v.get("hand_ended") {
        event::Kind::HandEnded(pb::HandEnded {
            totals: h["totals"].as_array().unwrap().iter().map(|x| x.as_i64().unwrap() as i32).collect(),
            ..Default::default()
        })
    } else {
        return pb::Event::default();
    };
    pb::Event { kind: Some(kind) }
}

#[test]
fn the_tracker_matches_the_public_state_of_every_prompt() {
    let mut trackers = std::collections::HashMap::<String, Tracker>::new();
    let mut checked = 0;
    for line in lines("tracker_streams.jsonl") {
        let t = trackers.entry(line["stream"].as_str().unwrap().into()).or_default();
        let m = &line["message"];
        match line["kind"].as_str().unwrap() {
            "welcome" => {
                let r = &m["config"]["rules"];
                t.on_welcome(&pb::Welcome {
                    seat: num(m, "seat"),
                    config: Some(pb::MatchConfig {
                        rules: Some(pb::Rules {
                            suit_order: r["suit_order"].as_str().unwrap().into(),
                            straights: r["straights"].as_str().unwrap().into(),
                            five_card_categories: r["five_card_categories"].as_str().unwrap().into(),
                            five_card_hands: flag(r, "five_card_hands"),
                            pass_locks_out: flag(r, "pass_locks_out"),
                            bomb: flag(r, "bomb"),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                })
            }
            "snapshot" => t.on_snapshot(&pb::Snapshot { state: Some(state_of(&m["state"])), hand: strings(&m["hand"]) }),
            "event" => t.on_event(&event_of(m)),
            _ => {
                let st = state_of(&m["state"]);
                let turn = &m["turn_id"];
                assert_eq!(t.hand_number, st.hand_number, "{turn}");
                assert_eq!(t.hand, strings(&m["hand"]), "{turn}");
                assert_eq!(t.card_counts, st.card_counts, "{turn}");
                assert_eq!(t.played_cards, st.played_cards, "{turn}");
                assert_eq!(t.table, st.table.map(|p| p.cards).unwrap_or_default(), "{turn}");
                assert_eq!(t.table_seat, st.table_seat, "{turn}");
                assert_eq!(t.locked_out, st.locked_out, "{turn}");
                assert_eq!(t.revolution, st.revolution, "{turn}");
                assert_eq!(t.totals, st.totals, "{turn}");
                let want: Vec<(u32, Vec<String>)> = st
                    .trick
                    .iter()
                    .map(|x| (x.seat, if x.pass { vec![] } else { x.play.clone().unwrap().cards }))
                    .collect();
                let got: Vec<(u32, Vec<String>)> = t.trick.iter().map(|e| (e.seat, e.cards.clone())).collect();
                assert_eq!(got, want, "{turn}");
                checked += 1;
            }
        }
    }
    assert_eq!(trackers.len(), 3);
    assert!(checked > 100);
}
