//! Connect a bot to a referee and play its seat to the end of the match.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::mpsc;
use tokio_stream::{Stream, StreamExt, wrappers::ReceiverStream};
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};
use tonic::{Code, Status};

use crate::pb::{self, event, play_response, play_service_client::PlayServiceClient};
use crate::worker::{NoAnswer, Worker};
use crate::{Bot, Choice, Prompt, Rejection, action_request, fallback, hello_request};

/// Where and how to play.
#[derive(Clone, Debug)]
pub struct Config {
    /// The referee, as `host:port` or `http://host:port`.
    pub address: String,
    /// The seat's secret token.
    pub token: String,
    /// Give up after this long without a seat (from the start, or from the loss of the
    /// seat): 60 s by default, long enough for a referee restart.
    pub reconnect_window: Duration,
    /// The safety margin: the budget ends this long before the turn's end (50 ms).
    pub deadline_margin: Duration,
    /// TLS settings; `None`: plaintext.
    pub tls: Option<Tls>,
    /// Limit on each TCP connect.
    pub connect_timeout: Duration,
    /// Write connection progress (connected, dropped, rejections) to stderr.
    pub verbose: bool,
    /// Ask for the events batched into the prompts (`Hello.batch_events`,
    /// docs/protocol.md 3.5): fewer messages; [`Bot::on_event`] still sees every event,
    /// just before the bot's turn.
    pub batch_events: bool,
}

/// TLS to the referee: trust the system's CAs, or those of `ca`; show a client
/// certificate for mutual TLS.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tls {
    /// PEM file of the CA that signs the referee's certificate.
    pub ca: Option<String>,
    /// PEM client certificate and key files, for mutual TLS.
    pub cert: Option<String>,
    /// The client key (with `cert`).
    pub key: Option<String>,
    /// The name to check in the referee's certificate instead of the address's host.
    pub server_name: Option<String>,
}

impl Tls {
    /// The tonic TLS settings; `Error::Usage` when a file cannot be read.
    pub fn client_config(&self) -> Result<ClientTlsConfig, Error> {
        let read = |path: &str, what: &str| {
            std::fs::read(path).map_err(|e| Error::Usage(format!("cannot read the {what} {path}: {e}")))
        };
        let mut config = ClientTlsConfig::new().with_native_roots();
        if let Some(ca) = &self.ca {
            config = config.ca_certificate(Certificate::from_pem(read(ca, "CA file")?));
        }
        match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                config = config.identity(Identity::from_pem(
                    read(cert, "client certificate")?,
                    read(key, "client key")?,
                ));
            }
            (None, None) => {}
            _ => return Err(Error::Usage("--tls-cert and --tls-key go together".into())),
        }
        if let Some(name) = &self.server_name {
            config = config.domain_name(name.clone());
        }
        Ok(config)
    }
}

impl Config {
    /// The defaults: 60 s reconnect window, 50 ms safety margin, 2 s connect timeout,
    /// plaintext, live events.
    pub fn new(address: impl Into<String>, token: impl Into<String>) -> Self {
        Config {
            address: address.into(),
            token: token.into(),
            reconnect_window: Duration::from_secs(60),
            deadline_margin: Duration::from_millis(50),
            tls: None,
            connect_timeout: Duration::from_secs(2),
            verbose: true,
            batch_events: false,
        }
    }
}

/// How the match ended for this bot.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchOutcome {
    /// The bot's seat.
    pub seat: u32,
    /// The match.
    pub match_id: String,
    /// The match_ended event; `None` when the match ended while the bot was away.
    pub ended: Option<pb::MatchEnded>,
}

impl MatchOutcome {
    /// The seat's place (1 = first), when known.
    pub fn place(&self) -> Option<u32> {
        let ended = self.ended.as_ref()?;
        ended
            .standings
            .iter()
            .find(|s| s.seats.contains(&self.seat))
            .map(|s| s.place)
    }
}

/// Why a bot could not play its match to the end.
#[derive(Debug)]
pub enum Error {
    /// The referee refused the seat (bad token, seat taken, version, match over...).
    Refused {
        /// Why.
        reason: pb::RefusalReason,
        /// The referee's explanation.
        message: String,
    },
    /// No seat could be had within the reconnect window.
    Unreachable {
        /// The referee's address.
        address: String,
        /// The last failure seen.
        last_error: String,
    },
    /// The address is not a valid URI.
    BadAddress(String),
    /// A setting cannot work (an unreadable TLS file, ...).
    Usage(String),
    /// The referee ended the stream with a status that is not worth a retry.
    Rpc(Status),
    /// The async runtime could not start.
    Runtime(std::io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Refused { reason, message } => {
                write!(f, "refused: {}: {message}", reason.as_str_name())
            }
            Error::Unreachable {
                address,
                last_error,
            } => {
                write!(f, "could not reach the referee at {address}: {last_error}")
            }
            Error::BadAddress(address) => write!(f, "bad referee address {address:?}"),
            Error::Usage(message) => write!(f, "{message}"),
            Error::Rpc(status) => write!(
                f,
                "stream failed: {:?}: {}",
                status.code(),
                status.message()
            ),
            Error::Runtime(err) => write!(f, "cannot start the async runtime: {err}"),
        }
    }
}

impl std::error::Error for Error {}

/// Delays between reconnect attempts: at once, then a random delay in [d/2, d] with d
/// from 50 ms doubling up to 1 s (jitter keeps a table's bots out of step).
#[derive(Clone, Debug, Default)]
pub struct Backoff {
    next: Duration,
}

impl Backoff {
    /// The first delay is zero.
    pub fn new() -> Self {
        Backoff {
            next: Duration::ZERO,
        }
    }

    /// The delay before the next attempt.
    pub fn next_delay(&mut self) -> Duration {
        let d = self.next;
        self.next = (d * 2).clamp(Duration::from_millis(50), Duration::from_secs(1));
        d / 2 + d.mul_f64(random_unit() / 2.0)
    }

    /// Start over (after a seat was had again).
    pub fn reset(&mut self) {
        self.next = Duration::ZERO;
    }
}

/// A random number in [0, 1) from the standard library's per-process hash keys.
fn random_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(Instant::now().elapsed().as_nanos() as u64);
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Plays `bot` on a current-thread runtime until the match ends. Blocks.
pub fn run<B: Bot>(bot: B, config: &Config) -> Result<MatchOutcome, Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    runtime.block_on(play(bot, config))
}

/// Plays `bot` until the match ends, reconnecting with the same token after a dropped
/// stream. Needs a tokio runtime with time and I/O enabled.
pub async fn play<B: Bot>(bot: B, config: &Config) -> Result<MatchOutcome, Error> {
    let scheme = if config.tls.is_some() { "https" } else { "http" };
    let uri = if config.address.contains("://") {
        config.address.clone()
    } else {
        format!("{scheme}://{}", config.address)
    };
    let mut endpoint = Endpoint::from_shared(uri)
        .map_err(|_| Error::BadAddress(config.address.clone()))?
        .connect_timeout(config.connect_timeout)
        .tcp_nodelay(true);
    if let Some(tls) = &config.tls {
        endpoint = endpoint
            .tls_config(tls.client_config()?)
            .map_err(|e| Error::Usage(format!("TLS: {}", error_chain(&e))))?;
    }
    let use_time_bank = bot.use_time_bank();
    let hello = hello_request(
        &config.token,
        bot.name(),
        bot.want_legal_plays(),
        config.batch_events,
    );
    let bot = Worker::spawn(bot);
    let mut seat = SeatState::default();
    let mut backoff = Backoff::new();
    let mut since = Instant::now(); // the start of the current time without a seat
    let mut last_refusal: Option<Error> = None;
    loop {
        let welcomes = seat.welcomes;
        let failure = match attempt(&endpoint, &bot, &hello, &mut seat, config, use_time_bank).await {
            Ok(Some(outcome)) => return Ok(outcome),
            Ok(None) => "the referee ended the stream before the match ended".to_owned(),
            Err(Attempt::Refused { reason, message }) => {
                // SEAT_TAKEN: the referee may not have noticed the old stream's end yet;
                // SHUTTING_DOWN: a restarting referee may take the seat back. Both are
                // retried within the window (docs/kits.md, section 6).
                if reason != pb::RefusalReason::SeatTaken && reason != pb::RefusalReason::ShuttingDown {
                    return Err(Error::Refused { reason, message });
                }
                let why = format!("refused: {}: {message}", reason.as_str_name());
                last_refusal = Some(Error::Refused { reason, message });
                why
            }
            Err(Attempt::Retry(why)) => why,
            Err(Attempt::Fatal(err)) => return Err(err),
        };
        if seat.welcomes != welcomes {
            since = Instant::now();
            backoff.reset();
            last_refusal = None;
        }
        if since.elapsed() > config.reconnect_window {
            if let Some(refused) = last_refusal {
                return Err(refused);
            }
            return Err(Error::Unreachable {
                address: config.address.clone(),
                last_error: failure,
            });
        }
        let delay = backoff.next_delay();
        if config.verbose {
            eprintln!(
                "pusoy-client: {failure}; reconnecting in {} ms",
                delay.as_millis()
            );
        }
        tokio::time::sleep(delay).await;
    }
}

/// What the runner knows about its seat across streams.
#[derive(Debug, Default)]
struct SeatState {
    seat: Option<u32>,
    match_id: String,
    welcomes: u32,
}

impl SeatState {
    fn outcome(&self, ended: Option<pb::MatchEnded>) -> MatchOutcome {
        MatchOutcome {
            seat: self.seat.unwrap_or_default(),
            match_id: self.match_id.clone(),
            ended,
        }
    }
}

/// Why one stream ended without the match's end.
#[derive(Debug)]
enum Attempt {
    Refused {
        reason: pb::RefusalReason,
        message: String,
    },
    Retry(String),
    Fatal(Error),
}

fn classify(status: Status) -> Attempt {
    match status.code() {
        Code::Unavailable
        | Code::Cancelled
        | Code::Internal
        | Code::Unknown
        | Code::DeadlineExceeded => Attempt::Retry(
            format!("stream failed: {:?}: {}", status.code(), status.message()),
        ),
        _ => Attempt::Fatal(Error::Rpc(status)),
    }
}

/// One stream: connect, hello, play. `Ok(None)`: the stream ended before the match did.
async fn attempt<B: Bot>(
    endpoint: &Endpoint,
    bot: &Worker<B>,
    hello: &pb::PlayRequest,
    seat: &mut SeatState,
    config: &Config,
    use_time_bank: bool,
) -> Result<Option<MatchOutcome>, Attempt> {
    let channel = endpoint
        .connect()
        .await
        .map_err(|err| Attempt::Retry(format!("cannot connect: {}", error_chain(&err))))?;
    let mut client = PlayServiceClient::new(channel);
    let (tx, rx) = mpsc::channel(16);
    tx.try_send(hello.clone()).expect("a new channel has room");
    let incoming = client
        .play(ReceiverStream::new(rx))
        .await
        .map_err(classify)?
        .into_inner();
    drive(bot, incoming, &tx, seat, config, use_time_bank).await
}

/// Handles the referee's messages on one stream, sending answers on `tx`.
async fn drive<B, S>(
    bot: &Worker<B>,
    mut incoming: S,
    tx: &mpsc::Sender<pb::PlayRequest>,
    seat: &mut SeatState,
    config: &Config,
    use_time_bank: bool,
) -> Result<Option<MatchOutcome>, Attempt>
where
    B: Bot,
    S: Stream<Item = Result<pb::PlayResponse, Status>> + Unpin,
{
    let mut current: Option<Arc<Prompt>> = None;
    let mut last_sent: Option<Choice> = None; // for the open turn
    while let Some(message) = incoming.next().await {
        let Some(kind) = message.map_err(classify)?.kind else {
            continue;
        };
        match kind {
            play_response::Kind::Welcome(welcome) => {
                if config.verbose {
                    eprintln!(
                        "pusoy-client: seat {} of match {}{}",
                        welcome.seat,
                        welcome.match_id,
                        if welcome.reconnect {
                            " (reconnected)"
                        } else {
                            ""
                        }
                    );
                }
                seat.seat = Some(welcome.seat);
                seat.match_id = welcome.match_id.clone();
                seat.welcomes += 1;
                bot.tell(move |bot| bot.on_welcome(&welcome));
            }
            play_response::Kind::Refusal(refusal) => {
                let reason = pb::RefusalReason::try_from(refusal.reason)
                    .unwrap_or(pb::RefusalReason::Unspecified);
                if reason == pb::RefusalReason::MatchOver && seat.seat.is_some() {
                    return Ok(Some(seat.outcome(None))); // it ended while we were away
                }
                return Err(Attempt::Refused {
                    reason,
                    message: refusal.message,
                });
            }
            play_response::Kind::Snapshot(snapshot) => {
                bot.tell(move |bot| bot.on_snapshot(&snapshot));
            }
            play_response::Kind::Event(event) => {
                if let Some(ended) = deliver(bot, event) {
                    drain(bot).await;
                    return Ok(Some(seat.outcome(Some(ended))));
                }
            }
            play_response::Kind::Batch(batch) => {
                for event in batch.events {
                    if let Some(ended) = deliver(bot, event) {
                        drain(bot).await;
                        return Ok(Some(seat.outcome(Some(ended))));
                    }
                }
            }
            play_response::Kind::Prompt(mut prompt) => {
                // Batched: the events since the last prompt reach the bot before its turn.
                for event in std::mem::take(&mut prompt.events) {
                    deliver(bot, event);
                }
                let prompt = Arc::new(Prompt::received(
                    prompt,
                    Instant::now(),
                    SystemTime::now(),
                    config.deadline_margin,
                    use_time_bank,
                ));
                let choice =
                    decide(bot, &prompt, config, "choose", |bot, prompt| bot.choose(prompt)).await;
                // A failed send means the stream is closing; the loop sees its end.
                let _ = tx.send(action_request(prompt.turn_id, &choice)).await;
                last_sent = Some(choice);
                current = Some(prompt);
            }
            play_response::Kind::Result(result) if !result.accepted => {
                let rejection = Rejection::from(result);
                if config.verbose {
                    eprintln!(
                        "pusoy-client: turn {} rejected: {}: {} ({} attempts left)",
                        rejection.turn_id,
                        rejection.reason.as_str_name(),
                        rejection.message,
                        rejection.attempts_left
                    );
                }
                let Some(prompt) = current.as_ref() else {
                    continue;
                };
                if prompt.turn_id != rejection.turn_id || rejection.attempts_left == 0 {
                    continue;
                }
                let choice = decide(bot, prompt, config, "on_rejected", move |bot, prompt| {
                    bot.on_rejected(prompt, &rejection)
                })
                .await;
                if last_sent.as_ref().is_some_and(|sent| same_cards(sent, &choice)) {
                    // The answer just rejected (the fallback, say) would be rejected
                    // again: the referee acts for the seat at its deadline.
                    continue;
                }
                let _ = tx.send(action_request(prompt.turn_id, &choice)).await;
                last_sent = Some(choice);
            }
            play_response::Kind::Result(_) => {}
        }
    }
    Ok(None)
}

/// Hands one event to the bot's `on_event`, live or batched alike; the match's end, if
/// it is one.
fn deliver<B: Bot>(bot: &Worker<B>, event: pb::Event) -> Option<pb::MatchEnded> {
    let ended = match &event.kind {
        Some(event::Kind::MatchEnded(ended)) => Some(ended.clone()),
        _ => None,
    };
    bot.tell(move |bot| bot.on_event(&event));
    ended
}

/// At the match's end, how long the bot's last hooks may take before the run returns.
const DRAIN: Duration = Duration::from_secs(2);

/// Lets the calls queued so far (the last events) run, within [`DRAIN`].
async fn drain<B: Bot>(bot: &Worker<B>) {
    let _ = bot.ask(DRAIN, |_| ()).await;
}

fn same_cards(a: &Choice, b: &Choice) -> bool {
    match (a, b) {
        (Choice::Pass, Choice::Pass) => true,
        (Choice::Play(x), Choice::Play(y)) => {
            let (mut x, mut y) = (x.clone(), y.clone());
            x.sort();
            y.sort();
            x == y
        }
        _ => false,
    }
}

/// The first word of the line written to stderr when the bot's own code panics on a
/// turn (`choose` or `on_rejected`) and the fallback goes out instead (docs/kits.md,
/// section 5): the referee finds it in the bot's output and names it.
pub const RAISED_MARKER: &str = "PUSOY_BOT_RAISED";

/// How many characters of what was raised the marker line keeps.
pub const RAISED_MAX_CHARS: usize = 200;

/// The marker line for a panic with `message` in the bot's `call` (`choose` or
/// `on_rejected`) on turn `turn_id`: one line, control characters made spaces.
///
/// ```
/// assert_eq!(
///     pusoy_client::raised_line(14, "choose", "attempt to divide by zero"),
///     "PUSOY_BOT_RAISED turn=14 call=choose error=panic: attempt to divide by zero"
/// );
/// ```
pub fn raised_line(turn_id: u64, call: &str, message: &str) -> String {
    let shown: String = format!("panic: {message}")
        .chars()
        .map(|c| if c.is_control() || c == '\u{2028}' || c == '\u{2029}' { ' ' } else { c })
        .take(RAISED_MAX_CHARS)
        .collect();
    format!("{RAISED_MARKER} turn={turn_id} call={call} error={shown}")
}

/// Asks the bot for a choice (its `call`: `choose` or `on_rejected`); past the budget
/// the answer is [`fallback`] instead. A panicking bot also gets the fallback, and the
/// raised marker is written.
async fn decide<B, F>(
    bot: &Worker<B>,
    prompt: &Arc<Prompt>,
    config: &Config,
    call: &str,
    decide: F,
) -> Choice
where
    B: Bot,
    F: FnOnce(&mut B, &Prompt) -> Choice + Send + 'static,
{
    let budget = prompt.budget.remaining();
    let shared = Arc::clone(prompt);
    match bot.ask(budget, move |bot| decide(bot, &shared)).await {
        Ok(choice) => choice,
        Err(NoAnswer::Panicked(message)) => {
            eprintln!(
                "pusoy-client: the bot failed on turn {}; sending the fallback",
                prompt.turn_id
            );
            eprintln!("{}", raised_line(prompt.turn_id, call, &message));
            fallback(prompt)
        }
        Err(NoAnswer::Late) => {
            if config.verbose {
                eprintln!(
                    "pusoy-client: turn {} ran out of time; sending the fallback",
                    prompt.turn_id
                );
            }
            fallback(prompt)
        }
    }
}

fn error_chain(err: &dyn std::error::Error) -> String {
    // Some errors repeat their source in their own text: keep each part once.
    let mut parts = vec![err.to_string()];
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        let last = parts.last_mut().expect("not empty");
        if text.starts_with(last.as_str()) {
            *last = text;
        } else if !last.ends_with(&text) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod raised_tests {
    use super::*;

    #[test]
    fn the_raised_marker_names_the_turn_the_call_and_the_panic() {
        assert_eq!(RAISED_MARKER, "PUSOY_BOT_RAISED");
        assert_eq!(
            raised_line(3, "on_rejected", "boom"),
            "PUSOY_BOT_RAISED turn=3 call=on_rejected error=panic: boom"
        );
    }

    #[test]
    fn the_raised_marker_is_one_bounded_line() {
        let long = format!("x\ny\r\tz\u{2028}{}", "w".repeat(500));
        let line = raised_line(1, "choose", &long);
        assert!(!line.contains(['\n', '\r', '\t', '\u{2028}']), "{line}");
        assert!(line.starts_with("PUSOY_BOT_RAISED turn=1 call=choose error=panic: x y  z "));
        assert_eq!(line.split_once(" error=").unwrap().1.chars().count(), RAISED_MAX_CHARS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb::{action, play_request};
    use crate::testing::raw_prompt;

    /// What a [`Recorder`] saw, readable after the run.
    #[derive(Debug, Default)]
    struct Seen {
        events: usize,
        welcomes: usize,
        snapshots: usize,
        events_at_choose: Vec<usize>,
    }

    /// Plays the weakest legal play, napping first as long as `naps` says (one entry per
    /// call, none after); records the hooks' calls.
    #[derive(Default)]
    struct Recorder {
        naps: Vec<Duration>,
        seen: Arc<std::sync::Mutex<Seen>>,
    }

    impl Recorder {
        fn napping(naps: &[u64]) -> Self {
            let naps = naps
                .iter()
                .map(|&ms| Duration::from_millis(ms))
                .rev()
                .collect();
            Recorder {
                naps,
                ..Default::default()
            }
        }
    }

    impl Bot for Recorder {
        fn choose(&mut self, prompt: &Prompt) -> Choice {
            {
                let mut seen = self.seen.lock().unwrap();
                let events = seen.events;
                seen.events_at_choose.push(events);
            }
            std::thread::sleep(self.naps.pop().unwrap_or_default());
            prompt
                .legal_plays
                .first()
                .map_or(Choice::Pass, Choice::from)
        }
        fn on_welcome(&mut self, _: &pb::Welcome) {
            self.seen.lock().unwrap().welcomes += 1;
        }
        fn on_snapshot(&mut self, _: &pb::Snapshot) {
            self.seen.lock().unwrap().snapshots += 1;
        }
        fn on_event(&mut self, _: &pb::Event) {
            self.seen.lock().unwrap().events += 1;
        }
    }

    fn response(kind: play_response::Kind) -> Result<pb::PlayResponse, Status> {
        Ok(pb::PlayResponse { kind: Some(kind) })
    }

    fn welcome(seat: u32) -> Result<pb::PlayResponse, Status> {
        response(play_response::Kind::Welcome(pb::Welcome {
            seat,
            match_id: "m-1".into(),
            protocol_version: 1,
            ..Default::default()
        }))
    }

    fn prompt_in(time: Duration) -> Result<pb::PlayResponse, Status> {
        prompt_with(42, time, false)
    }

    fn prompt_with(
        turn_id: u64,
        time: Duration,
        can_pass: bool,
    ) -> Result<pb::PlayResponse, Status> {
        let mut prompt = raw_prompt();
        prompt.turn_id = turn_id;
        prompt.deadline = Some((SystemTime::now() + time).into());
        prompt.time_bank_ms = 0; // the budget is the deadline's alone here
        prompt.can_pass = can_pass;
        response(play_response::Kind::Prompt(prompt))
    }

    fn rejected(turn_id: u64, attempts_left: u32) -> Result<pb::PlayResponse, Status> {
        response(play_response::Kind::Result(pb::ActionResult {
            turn_id,
            accepted: false,
            reason: pb::RejectionReason::DoesNotBeat as i32,
            message: "does not beat 4D".into(),
            attempts_left,
        }))
    }

    fn match_ended() -> Result<pb::PlayResponse, Status> {
        response(play_response::Kind::Event(pb::Event {
            kind: Some(event::Kind::MatchEnded(pb::MatchEnded {
                status: pb::MatchStatus::Finished as i32,
                standings: vec![
                    pb::Standing {
                        place: 1,
                        seats: vec![0],
                        ..Default::default()
                    },
                    pb::Standing {
                        place: 2,
                        seats: vec![2],
                        ..Default::default()
                    },
                ],
                ..Default::default()
            })),
        }))
    }

    fn trick_cleared() -> pb::Event {
        pb::Event {
            kind: Some(event::Kind::TrickCleared(pb::TrickCleared { leader: 1 })),
        }
    }

    fn match_event() -> Result<pb::PlayResponse, Status> {
        response(play_response::Kind::Event(pb::Event {
            kind: Some(event::Kind::TrickCleared(pb::TrickCleared { leader: 1 })),
        }))
    }

    fn refusal(reason: pb::RefusalReason) -> Result<pb::PlayResponse, Status> {
        response(play_response::Kind::Refusal(pb::Refusal {
            reason: reason as i32,
            message: "no".into(),
            supported_versions: vec![1],
        }))
    }

    struct Run {
        result: Result<Option<MatchOutcome>, Attempt>,
        sent: Vec<pb::Action>,
        seat: SeatState,
        seen: Arc<std::sync::Mutex<Seen>>,
        took: Duration,
    }

    /// Drives a bot through a scripted stream; returns the result and the actions sent.
    fn drive_script(
        bot: Recorder,
        script: Vec<Result<pb::PlayResponse, Status>>,
        seat: SeatState,
    ) -> Run {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let seen = Arc::clone(&bot.seen);
        let bot = Worker::spawn(bot);
        let mut seat = seat;
        let mut config = Config::new("127.0.0.1:1", "tok");
        config.verbose = false;
        let (tx, mut rx) = mpsc::channel(16);
        let started = Instant::now();
        let result = runtime.block_on(drive(
            &bot,
            tokio_stream::iter(script),
            &tx,
            &mut seat,
            &config,
            true,
        ));
        let took = started.elapsed();
        bot.join();
        let mut sent = Vec::new();
        while let Ok(request) = rx.try_recv() {
            match request.kind {
                Some(play_request::Kind::Action(action)) => sent.push(action),
                other => panic!("unexpected request {other:?}"),
            }
        }
        Run {
            result,
            sent,
            seat,
            seen,
            took,
        }
    }

    fn play_of(action: &pb::Action) -> Option<Vec<String>> {
        match &action.kind {
            Some(action::Kind::Play(cards)) => Some(cards.cards.clone()),
            _ => None,
        }
    }

    #[test]
    fn plays_recovers_from_a_rejection_and_ends_with_the_match() {
        let script = vec![
            welcome(2),
            response(play_response::Kind::Snapshot(pb::Snapshot::default())),
            prompt_in(Duration::from_secs(10)),
            rejected(42, 2),
            match_ended(),
            welcome(2), // never read: the match is over
        ];
        let run = drive_script(Recorder::default(), script, SeatState::default());
        let outcome = run.result.unwrap().expect("the match ended");
        assert_eq!((outcome.seat, outcome.match_id.as_str()), (2, "m-1"));
        assert_eq!(outcome.place(), Some(2));
        // The default rejection hook answers the fallback, the weakest play, which is the
        // play just rejected: it is not sent again (the referee acts at its deadline).
        assert_eq!(run.sent.len(), 1);
        assert!(run.sent.iter().all(|action| action.turn_id == 42));
        assert_eq!(play_of(&run.sent[0]), Some(vec!["5S".to_string()]));
        let seen = run.seen.lock().unwrap();
        assert_eq!((seen.welcomes, seen.snapshots, seen.events), (1, 1, 1));
        assert_eq!(run.seat.welcomes, 1);
    }

    #[test]
    fn batched_events_reach_the_hooks_before_the_turn_and_a_batch_ends_the_match() {
        let Ok(pb::PlayResponse {
            kind: Some(play_response::Kind::Prompt(mut prompt)),
        }) = prompt_in(Duration::from_secs(10))
        else {
            unreachable!()
        };
        prompt.events = vec![trick_cleared(), trick_cleared()];
        let Ok(pb::PlayResponse {
            kind: Some(play_response::Kind::Event(ended)),
        }) = match_ended()
        else {
            unreachable!()
        };
        let script = vec![
            welcome(2),
            response(play_response::Kind::Prompt(prompt)),
            response(play_response::Kind::Batch(pb::EventBatch {
                events: vec![trick_cleared(), ended],
            })),
            welcome(2), // never read: the batch ended the match
        ];
        let run = drive_script(Recorder::default(), script, SeatState::default());
        let outcome = run.result.unwrap().expect("the batch ended the match");
        assert_eq!(outcome.place(), Some(2));
        assert_eq!(run.sent.len(), 1);
        let seen = run.seen.lock().unwrap();
        assert_eq!(seen.events_at_choose, [2]);
        assert_eq!((seen.welcomes, seen.events), (1, 4));
    }

    #[test]
    fn no_retry_without_attempts_left_or_for_another_turn() {
        let script = vec![
            welcome(2),
            prompt_in(Duration::from_secs(10)),
            rejected(42, 0),
            rejected(41, 2),
        ];
        let run = drive_script(Recorder::default(), script, SeatState::default());
        assert!(matches!(run.result, Ok(None)), "the stream just ended");
        assert_eq!(run.sent.len(), 1);
    }

    #[test]
    fn a_slow_bot_gets_the_fallback_before_the_deadline() {
        let script = vec![
            welcome(2),
            prompt_with(42, Duration::from_millis(300), true),
        ];
        let run = drive_script(Recorder::napping(&[800]), script, SeatState::default());
        assert!(
            run.took < Duration::from_millis(800),
            "answered after {:?}",
            run.took
        );
        assert_eq!(run.sent.len(), 1);
        assert_eq!(run.sent[0].kind, Some(action::Kind::Pass(pb::Pass {})));
    }

    #[test]
    fn a_slow_turn_does_not_stall_the_events_and_turns_after_it() {
        let script = vec![
            welcome(2),
            prompt_with(42, Duration::from_millis(200), true),
            match_event(),
            match_event(),
            prompt_with(46, Duration::from_secs(3), true),
        ];
        let run = drive_script(Recorder::napping(&[700]), script, SeatState::default());
        assert!(matches!(run.result, Ok(None)));
        let sent: Vec<_> = run.sent.iter().map(|a| (a.turn_id, play_of(a))).collect();
        // Turn 42: the fallback (a pass) in time; turn 46: the bot's own choice, made as
        // soon as it was free again.
        assert_eq!(sent, [(42, None), (46, Some(vec!["5S".to_string()]))]);
        assert!(
            run.took < Duration::from_millis(1500),
            "took {:?}",
            run.took
        );
        assert_eq!(run.seen.lock().unwrap().events, 2);
    }

    #[test]
    fn match_over_after_holding_the_seat_is_a_clean_end() {
        let seat = SeatState {
            seat: Some(1),
            match_id: "m-1".into(),
            welcomes: 1,
        };
        let run = drive_script(
            Recorder::default(),
            vec![refusal(pb::RefusalReason::MatchOver)],
            seat,
        );
        let outcome = run.result.unwrap().expect("ended while away");
        assert_eq!(outcome.seat, 1);
        assert_eq!(outcome.ended, None);
        assert_eq!(outcome.place(), None);
    }

    #[test]
    fn refusals_before_holding_the_seat_are_errors() {
        for reason in [pb::RefusalReason::MatchOver, pb::RefusalReason::BadToken] {
            let run = drive_script(
                Recorder::default(),
                vec![refusal(reason)],
                SeatState::default(),
            );
            assert!(matches!(run.result, Err(Attempt::Refused { reason: r, .. }) if r == reason));
        }
    }

    #[test]
    fn stream_failures_are_retried_or_fatal_by_status() {
        let run = drive_script(
            Recorder::default(),
            vec![welcome(0), Err(Status::unavailable("gone"))],
            SeatState::default(),
        );
        assert!(matches!(run.result, Err(Attempt::Retry(_))));
        let run = drive_script(
            Recorder::default(),
            vec![Err(Status::permission_denied("no"))],
            SeatState::default(),
        );
        assert!(matches!(run.result, Err(Attempt::Fatal(Error::Rpc(_)))));
    }

    #[test]
    fn error_chains_name_each_cause_once() {
        #[derive(Debug)]
        struct Layer(&'static str, Option<Box<Layer>>);
        impl fmt::Display for Layer {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for Layer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_deref().map(|layer| layer as _)
            }
        }
        let refused = Layer("tcp connect error: refused", None);
        let tcp = Layer("tcp connect error", Some(Box::new(refused)));
        let err = Layer("transport error", Some(Box::new(tcp)));
        assert_eq!(
            error_chain(&err),
            "transport error: tcp connect error: refused"
        );
    }

    #[test]
    fn backoff_is_immediate_then_a_jittered_doubling_from_50ms_to_1s() {
        let mut backoff = Backoff::new();
        let delays: Vec<u128> = (0..8).map(|_| backoff.next_delay().as_millis()).collect();
        let tops = [0, 50, 100, 200, 400, 800, 1000, 1000];
        for (got, top) in delays.iter().zip(tops) {
            assert!(*got >= top / 2 && *got <= top, "{delays:?}");
        }
        backoff.reset();
        assert_eq!(backoff.next_delay(), Duration::ZERO);
    }

    #[test]
    fn an_unreachable_referee_is_reported_after_the_window() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut config = Config::new("127.0.0.1:1", "tok"); // nothing listens on port 1
        config.reconnect_window = Duration::from_millis(300);
        config.verbose = false;
        let result = runtime.block_on(play(Recorder::default(), &config));
        assert!(
            matches!(result, Err(Error::Unreachable { .. })),
            "{result:?}"
        );
    }
}
