//! The bot's own thread: every call into the bot runs there, one at a time, in the
//! order the messages arrived, so a slow `choose` never stalls the connection.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use tokio::sync::oneshot;

use crate::Bot;

type Job<B> = Box<dyn FnOnce(&mut B) + Send>;

/// Why [`Worker::ask`] has no answer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NoAnswer {
    /// The time ran out (the bot is still busy).
    Late,
    /// The call panicked, with the panic's message (also printed by the panic hook).
    Panicked(String),
}

/// A panic's message: its payload when it is text (`panic!("...")`, an `expect`).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a value that is not text".to_string()
    }
}

/// A handle on the bot's thread. Dropping it lets the thread end after its queue; a
/// call still running is not waited for.
pub(crate) struct Worker<B> {
    jobs: mpsc::Sender<Job<B>>,
    #[cfg_attr(not(test), allow(dead_code))] // joined in tests only
    thread: thread::JoinHandle<()>,
}

impl<B: Bot> Worker<B> {
    /// Moves `bot` to a new thread.
    pub(crate) fn spawn(mut bot: B) -> Self {
        let (jobs, queue) = mpsc::channel::<Job<B>>();
        let thread = thread::Builder::new()
            .name("bot".into())
            .spawn(move || {
                for job in queue {
                    // A panicking call does not end the match; the bot stays usable.
                    let _ = catch_unwind(AssertUnwindSafe(|| job(&mut bot)));
                }
            })
            .expect("cannot start the bot's thread");
        Worker { jobs, thread }
    }

    /// Queues a call whose result is not needed (the hooks).
    pub(crate) fn tell(&self, call: impl FnOnce(&mut B) + Send + 'static) {
        let _ = self.jobs.send(Box::new(call));
    }

    /// Queues a call and waits up to `budget` for its result. A call whose caller has
    /// stopped waiting by the time its turn comes is skipped.
    pub(crate) async fn ask<T: Send + 'static>(
        &self,
        budget: Duration,
        call: impl FnOnce(&mut B) -> T + Send + 'static,
    ) -> Result<T, NoAnswer> {
        let (reply, answer) = oneshot::channel();
        let _ = self.jobs.send(Box::new(move |bot: &mut B| {
            if !reply.is_closed() {
                let result = catch_unwind(AssertUnwindSafe(|| call(bot)));
                let _ = reply.send(result.map_err(|payload| panic_message(payload.as_ref())));
            }
        }));
        match tokio::time::timeout(budget, answer).await {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(message))) => Err(NoAnswer::Panicked(message)),
            Ok(Err(_)) => Err(NoAnswer::Panicked(String::new())), // the job was dropped
            Err(_) => Err(NoAnswer::Late),
        }
    }

    /// Waits for every queued call to finish (tests).
    #[cfg(test)]
    pub(crate) fn join(self) {
        drop(self.jobs);
        self.thread.join().expect("the bot's thread ended cleanly");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Choice, Prompt};
    use std::time::Instant;

    struct Napper(Vec<&'static str>);
    impl Bot for Napper {
        fn choose(&mut self, _: &Prompt) -> Choice {
            Choice::Pass
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    #[test]
    fn calls_run_in_order_and_late_answers_are_dropped() {
        let worker = Worker::spawn(Napper(Vec::new()));
        let rt = runtime();
        worker.tell(|bot| bot.0.push("event 1"));
        let started = Instant::now();
        let late = rt.block_on(worker.ask(Duration::from_millis(50), |bot| {
            std::thread::sleep(Duration::from_millis(300));
            bot.0.push("slow answer");
        }));
        assert_eq!(late, Err(NoAnswer::Late));
        assert!(started.elapsed() < Duration::from_millis(250));
        worker.tell(|bot| bot.0.push("event 2"));
        // Queued behind the slow call, and given up on before it runs: skipped.
        let skipped =
            rt.block_on(worker.ask(Duration::from_millis(10), |bot| bot.0.push("skipped")));
        assert_eq!(skipped, Err(NoAnswer::Late));
        let ok = rt.block_on(worker.ask(Duration::from_secs(5), |bot| bot.0.clone()));
        assert_eq!(ok, Ok(vec!["event 1", "slow answer", "event 2"]));
        worker.join();
    }

    #[test]
    fn a_panicking_call_leaves_the_bot_usable() {
        let worker = Worker::spawn(Napper(Vec::new()));
        let rt = runtime();
        let failed: Result<(), NoAnswer> =
            rt.block_on(worker.ask(Duration::from_secs(5), |_| panic!("deliberate test panic")));
        assert_eq!(failed, Err(NoAnswer::Panicked("deliberate test panic".into())));
        let formatted: Result<(), NoAnswer> =
            rt.block_on(worker.ask(Duration::from_secs(5), |_| panic!("turn {}", 7)));
        assert_eq!(formatted, Err(NoAnswer::Panicked("turn 7".into())));
        let ok = rt.block_on(worker.ask(Duration::from_secs(5), |bot| bot.0.len()));
        assert_eq!(ok, Ok(0));
        worker.join();
    }
}
