//! Client library for [pusoy-referee] bots (Pusoy Dos, Big Two).
//!
//! Implement [`Bot::choose`], which turns a [`Prompt`] into a [`Choice`] (cards to play
//! or a pass), and hand the bot to [`main`] (a complete command line: `--address`,
//! `--token`, `--misbehave` or `PUSOY_ADDRESS`, `PUSOY_TOKEN`, `PUSOY_MISBEHAVE=1`) or to
//! [`run`] / [`play`]. The library connects, says hello with the seat token, answers
//! every prompt before its deadline, recovers from rejected actions through
//! [`Bot::on_rejected`], and reconnects with the same token after a dropped stream.
//!
//! ```no_run
//! use pusoy_client::{Bot, Choice, Prompt};
//!
//! struct Lowest;
//!
//! impl Bot for Lowest {
//!     fn choose(&mut self, prompt: &Prompt) -> Choice {
//!         // The referee lists the legal plays weakest first.
//!         match prompt.legal_plays.first() {
//!             Some(play) => Choice::from(play),
//!             None => Choice::Pass,
//!         }
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     pusoy_client::main(Lowest)
//! }
//! ```
//!
//! The generated protocol types and gRPC clients are in [`pb`].
//!
//! [pusoy-referee]: https://github.com/pusoy-referee/pusoy-referee

/// Types and gRPC clients generated at build time from `proto/pusoy/referee/v1`.
#[allow(missing_docs, clippy::all)]
pub mod pb {
    tonic::include_proto!("pusoy.referee.v1");
}

mod bot;
pub mod cards;
mod cli;
mod messages;
mod misbehave;
mod prompt;
mod rules;
mod runner;
mod tracker;
#[cfg(test)]
mod testing;
mod worker;

pub use bot::{Bot, fallback};
pub use cli::{Args, Parsed, USAGE, main, parse_args};
pub use messages::{action_request, hello_request};
pub use misbehave::Misbehave;
pub use prompt::{Budget, Choice, DEFAULT_TURN_TIME, LegalPlay, Prompt, Rejection};
pub use rules::{Combo, Rules};
pub use runner::{
    Backoff, Config, Error, MatchOutcome, RAISED_MARKER, RAISED_MAX_CHARS, Tls, play, raised_line, run,
};
pub use tracker::{Tracker, TrickEntry};

/// The former name of [`MatchOutcome`], as docs/kits.md names it.
pub type Outcome = MatchOutcome;

/// The bot protocol version this library speaks.
pub const PROTOCOL_VERSION: u32 = 1;
