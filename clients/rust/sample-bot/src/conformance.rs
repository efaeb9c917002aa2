//! The Rust kit's conformance bot: a bot whose behaviour the transcript scripts
//! (`clients/conformance/README.md`), run through the kit's own `main`.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use pusoy_client::{Bot, Choice, Prompt, Rejection, Tracker, fallback, pb};
use serde_json::Value;

/// The exit code when a scripted check fails (the transcript then fails).
const EXIT_CHECK_FAILED: i32 = 70;

fn check_failed(why: &str) -> ! {
    eprintln!("rust-conformance: check failed: {why}");
    std::process::exit(EXIT_CHECK_FAILED);
}

/// What the tracker holds that differs from the referee's state in the prompt.
fn tracker_differs(t: &Tracker, p: &Prompt) -> Option<String> {
    let st = &p.state;
    let table = st.table.as_ref().map(|c| c.cards.clone()).unwrap_or_default();
    let trick: Vec<(u32, Vec<String>)> = st
        .trick
        .iter()
        .map(|x| (x.seat, if x.pass { vec![] } else { x.play.clone().unwrap_or_default().cards }))
        .collect();
    let mine: Vec<(u32, Vec<String>)> = t.trick.iter().map(|e| (e.seat, e.cards.clone())).collect();
    let pairs = [
        ("hand_number", format!("{:?}", t.hand_number), format!("{:?}", st.hand_number)),
        ("hand", format!("{:?}", t.hand), format!("{:?}", p.hand)),
        ("card_counts", format!("{:?}", t.card_counts), format!("{:?}", st.card_counts)),
        ("played_cards", format!("{:?}", t.played_cards), format!("{:?}", st.played_cards)),
        ("table", format!("{:?}", t.table), format!("{table:?}")),
        ("table_seat", format!("{:?}", t.table_seat), format!("{:?}", st.table_seat)),
        ("locked_out", format!("{:?}", t.locked_out), format!("{:?}", st.locked_out)),
        ("revolution", format!("{:?}", t.revolution), format!("{:?}", st.revolution)),
        ("trick", format!("{mine:?}"), format!("{trick:?}")),
        ("totals", format!("{:?}", t.totals), format!("{:?}", st.totals)),
        ("hands_won", format!("{:?}", t.hands_won), format!("{:?}", st.hands_won)),
    ];
    pairs.into_iter().find(|(_, a, b)| a != b).map(|(name, a, b)| {
        format!("turn {}: tracker {name} {a}, the referee's {b}", p.turn_id)
    })
}

struct Conformance {
    script: Value,
    /// With `"tracker"`: fed by the hooks, checked in `choose`.
    tracker: Option<Tracker>,
    /// `on_event` calls so far (read again after the run).
    events: Arc<AtomicUsize>,
}

impl Conformance {
    fn step(&self, table: &str, prompt: &Prompt) -> Option<Choice> {
        let step = self.script.get(table)?.get(prompt.turn_id.to_string())?;
        if let Some(ms) = step.get("block_ms").and_then(Value::as_u64) {
            std::thread::sleep(Duration::from_millis(ms)); // ignores the budget on purpose
        }
        if let Some(ms) = step.get("until_remaining_ms").and_then(Value::as_u64) {
            while prompt.budget.remaining() > Duration::from_millis(ms) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        if let Some(why) = step.get("throw").and_then(Value::as_str) {
            panic!("{why}");
        }
        if step.get("pass").and_then(Value::as_bool) == Some(true) {
            return Some(Choice::Pass);
        }
        let cards = step.get("play")?.as_array()?;
        Some(Choice::play(cards.iter().filter_map(Value::as_str)))
    }

    fn throws(&self, hook: &str) {
        let listed = self.script.get("throw_in").and_then(Value::as_array);
        if listed.is_some_and(|l| l.iter().any(|h| h.as_str() == Some(hook))) {
            panic!("scripted failure in {hook}");
        }
    }
}

impl Bot for Conformance {
    fn name(&self) -> &str {
        "rust-conformance"
    }

    fn want_legal_plays(&self) -> bool {
        self.script.get("want_legal_plays").and_then(Value::as_bool).unwrap_or(true)
    }

    fn choose(&mut self, prompt: &Prompt) -> Choice {
        let events = self.events.load(Ordering::SeqCst);
        let want = self.script.get("events_before").and_then(|m| m.get(prompt.turn_id.to_string()));
        if let Some(want) = want.and_then(Value::as_u64) {
            if want as usize != events {
                check_failed(&format!(
                    "turn {}: {events} events before choose, not {want}",
                    prompt.turn_id
                ));
            }
        }
        if let Some(why) = self.tracker.as_ref().and_then(|t| tracker_differs(t, prompt)) {
            check_failed(&why);
        }
        self.step("choose", prompt)
            .unwrap_or_else(|| prompt.legal_plays.first().map_or(Choice::Pass, Choice::from))
    }

    fn on_rejected(&mut self, prompt: &Prompt, _: &Rejection) -> Choice {
        self.throws("on_rejected");
        self.step("on_rejected", prompt).unwrap_or_else(|| fallback(prompt))
    }

    fn on_welcome(&mut self, welcome: &pb::Welcome) {
        if let Some(t) = self.tracker.as_mut() {
            t.on_welcome(welcome);
        }
        self.throws("on_welcome");
    }

    fn on_snapshot(&mut self, snapshot: &pb::Snapshot) {
        if let Some(t) = self.tracker.as_mut() {
            t.on_snapshot(snapshot);
        }
        self.throws("on_snapshot");
    }

    fn on_event(&mut self, event: &pb::Event) {
        self.events.fetch_add(1, Ordering::SeqCst);
        if let Some(t) = self.tracker.as_mut() {
            t.on_event(event);
        }
        self.throws("on_event");
    }
}

fn main() -> ExitCode {
    let text = std::env::var("PUSOY_CONFORMANCE_BOT").unwrap_or_else(|_| "{}".into());
    let script: Value = match serde_json::from_str(&text) {
        Ok(script) => script,
        Err(err) => {
            eprintln!("conformance-bot: PUSOY_CONFORMANCE_BOT: {err}");
            return ExitCode::from(64);
        }
    };
    let tracker = (script.get("tracker").and_then(Value::as_bool) == Some(true)).then(Tracker::default);
    let want = script.get("events_total").and_then(Value::as_u64);
    let events = Arc::new(AtomicUsize::new(0));
    let code = pusoy_client::main(Conformance { script, tracker, events: Arc::clone(&events) });
    let seen = events.load(Ordering::SeqCst);
    if let Some(want) = want.filter(|_| code == ExitCode::SUCCESS) {
        if want as usize != seen {
            check_failed(&format!("{seen} events in the run, not {want}"));
        }
    }
    code
}
