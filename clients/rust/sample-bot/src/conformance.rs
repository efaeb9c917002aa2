//! The Rust kit's conformance bot: a bot whose behaviour the transcript scripts
//! (`clients/conformance/README.md`), run through the kit's own `main`.

use std::process::ExitCode;
use std::time::Duration;

use pusoy_client::{Bot, Choice, Prompt, Rejection, fallback, pb};
use serde_json::Value;

struct Conformance {
    script: Value,
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
        self.step("choose", prompt)
            .unwrap_or_else(|| prompt.legal_plays.first().map_or(Choice::Pass, Choice::from))
    }

    fn on_rejected(&mut self, prompt: &Prompt, _: &Rejection) -> Choice {
        self.throws("on_rejected");
        self.step("on_rejected", prompt).unwrap_or_else(|| fallback(prompt))
    }

    fn on_welcome(&mut self, _: &pb::Welcome) {
        self.throws("on_welcome");
    }

    fn on_snapshot(&mut self, _: &pb::Snapshot) {
        self.throws("on_snapshot");
    }

    fn on_event(&mut self, _: &pb::Event) {
        self.throws("on_event");
    }
}

fn main() -> ExitCode {
    let text = std::env::var("PUSOY_CONFORMANCE_BOT").unwrap_or_else(|_| "{}".into());
    let script = match serde_json::from_str(&text) {
        Ok(script) => script,
        Err(err) => {
            eprintln!("conformance-bot: PUSOY_CONFORMANCE_BOT: {err}");
            return ExitCode::from(64);
        }
    };
    pusoy_client::main(Conformance { script })
}
