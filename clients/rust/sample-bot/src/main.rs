//! The sample bot's entry point: reads `--address`, `--token`, `--misbehave` (or
//! `PUSOY_ADDRESS`, `PUSOY_TOKEN`, `PUSOY_MISBEHAVE=1`) and plays one match.
//!
//! Your logic goes in `strategy.rs`.

mod rng;
mod strategy;

fn main() -> std::process::ExitCode {
    pusoy_client::main(strategy::MyBot::new())
}
