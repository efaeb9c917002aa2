//! The command line every bot gets: `--address`, `--token`, `--misbehave`.

use std::process::ExitCode;

use std::time::Duration;

use crate::{Bot, Config, Error, Misbehave, Tls, run};

/// The referee's address when none is given.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:50051";

/// The command line's help text.
pub const USAGE: &str = "\
usage: BOT [--address HOST:PORT] [--token TOKEN] [--misbehave] [--batch-events] [--quiet]
           [--reconnect-window-ms N] [--safety-margin-ms N]
           [--tls] [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] [--tls-server-name NAME]

  --address A              the referee ($PUSOY_ADDRESS, else 127.0.0.1:50051)
  --token T                the seat's token ($PUSOY_TOKEN)
  --misbehave              a card not in the hand as the first answer of each hand,
                           to show the recovery from a rejection ($PUSOY_MISBEHAVE=1)
  --batch-events           events batched into the prompts ($PUSOY_BATCH_EVENTS=1)
  --reconnect-window-ms N  retry this long after losing the seat ($PUSOY_RECONNECT_WINDOW_MS, 60000)
  --safety-margin-ms N     answer this long before the budget ends ($PUSOY_SAFETY_MARGIN_MS, 50)
  --tls                    TLS with the system's CAs ($PUSOY_TLS=1)
  --tls-ca FILE            the CA of the referee's certificate ($PUSOY_TLS_CA)
  --tls-cert, --tls-key    client certificate and key, mutual TLS ($PUSOY_TLS_CERT, $PUSOY_TLS_KEY)
  --tls-server-name NAME   the name to check in the certificate ($PUSOY_TLS_SERVER_NAME)
  --quiet                  no connection progress on stderr

Exit status: 0 the match ended, 1 internal error, 2 the referee refused the seat,
3 no seat within the reconnect window, 4 a stream failure a retry cannot fix,
64 a usage error.";

/// A bot's settings from its command line and environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// Retry this long after losing the seat.
    pub reconnect_window: Option<Duration>,
    /// The budget's safety margin.
    pub safety_margin: Option<Duration>,
    /// TLS, when any TLS option is given.
    pub tls: Option<Tls>,
    /// The referee's address.
    pub address: String,
    /// The seat token.
    pub token: String,
    /// Whether to break the rules on purpose (see [`Misbehave`]).
    pub misbehave: bool,
    /// Whether to keep stderr quiet.
    pub quiet: bool,
    /// Whether to ask for the events batched into the prompts.
    pub batch_events: bool,
}

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// Play.
    Run(Args),
    /// Print the usage.
    Help,
}

/// Reads the arguments (without the program name); options win over the environment
/// (`PUSOY_ADDRESS`, `PUSOY_TOKEN`, `PUSOY_MISBEHAVE`, `PUSOY_BATCH_EVENTS`, ...), read
/// through `env`.
pub fn parse_args<I, E>(args: I, env: E) -> Result<Parsed, String>
where
    I: IntoIterator<Item = String>,
    E: Fn(&str) -> Option<String>,
{
    let mut address = env("PUSOY_ADDRESS").filter(|a| !a.is_empty());
    let mut token = env("PUSOY_TOKEN").filter(|t| !t.is_empty());
    let mut misbehave = env("PUSOY_MISBEHAVE")
        .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"));
    let mut quiet = false;
    let on = |v: Option<String>| {
        v.is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
    };
    let millis = |name: &str, v: Option<String>| -> Result<Option<Duration>, String> {
        match v.filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => v
                .parse::<u64>()
                .map(|ms| Some(Duration::from_millis(ms)))
                .map_err(|_| format!("{name}: not a number of milliseconds: {v:?}")),
        }
    };
    let nonempty = |v: Option<String>| v.filter(|v| !v.is_empty());
    let mut reconnect_window = millis("PUSOY_RECONNECT_WINDOW_MS", env("PUSOY_RECONNECT_WINDOW_MS"))?;
    let mut safety_margin = millis("PUSOY_SAFETY_MARGIN_MS", env("PUSOY_SAFETY_MARGIN_MS"))?;
    let mut tls_on = on(env("PUSOY_TLS"));
    let mut batch_events = on(env("PUSOY_BATCH_EVENTS"));
    let mut tls = Tls {
        ca: nonempty(env("PUSOY_TLS_CA")),
        cert: nonempty(env("PUSOY_TLS_CERT")),
        key: nonempty(env("PUSOY_TLS_KEY")),
        server_name: nonempty(env("PUSOY_TLS_SERVER_NAME")),
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                (name.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name.as_str() {
            "--address" => address = Some(value("--address")?),
            "--token" => token = Some(value("--token")?),
            "--misbehave" => misbehave = true,
            "--batch-events" => batch_events = true,
            "--reconnect-window-ms" => {
                reconnect_window = millis("--reconnect-window-ms", Some(value("--reconnect-window-ms")?))?
            }
            "--safety-margin-ms" => {
                safety_margin = millis("--safety-margin-ms", Some(value("--safety-margin-ms")?))?
            }
            "--tls" => tls_on = true,
            "--tls-ca" => tls.ca = Some(value("--tls-ca")?),
            "--tls-cert" => tls.cert = Some(value("--tls-cert")?),
            "--tls-key" => tls.key = Some(value("--tls-key")?),
            "--tls-server-name" => tls.server_name = Some(value("--tls-server-name")?),
            "--quiet" | "-q" => quiet = true,
            "--help" | "-h" => return Ok(Parsed::Help),
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    let token = token.ok_or("a seat token is needed: --token or PUSOY_TOKEN")?;
    if tls.cert.is_some() != tls.key.is_some() {
        return Err("--tls-cert and --tls-key go together".into());
    }
    let uses_tls = tls_on || tls.ca.is_some() || tls.cert.is_some() || tls.key.is_some();
    Ok(Parsed::Run(Args {
        address: address.unwrap_or_else(|| DEFAULT_ADDRESS.to_owned()),
        token,
        misbehave,
        quiet,
        batch_events,
        reconnect_window,
        safety_margin,
        tls: uses_tls.then_some(tls),
    }))
}

/// A complete `main` for a bot: reads the command line, plays the match, reports how
/// it went and returns the exit status (0 when the match ended).
pub fn main<B: Bot>(bot: B) -> ExitCode {
    let name = bot.name().to_owned();
    let args = match parse_args(std::env::args().skip(1), |key| std::env::var(key).ok()) {
        Ok(Parsed::Run(args)) => args,
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("{name}: {message}\n{USAGE}");
            return ExitCode::from(64);
        }
    };
    let mut config = Config::new(&args.address, &args.token);
    config.verbose = !args.quiet;
    config.batch_events = args.batch_events;
    if let Some(window) = args.reconnect_window {
        config.reconnect_window = window;
    }
    if let Some(margin) = args.safety_margin {
        config.deadline_margin = margin;
    }
    config.tls = args.tls.clone();
    let result = if args.misbehave {
        run(Misbehave::new(bot), &config)
    } else {
        run(bot, &config)
    };
    match result {
        Ok(outcome) => {
            let place = outcome
                .place()
                .map_or("unknown (ended while away)".into(), |p| p.to_string());
            println!(
                "{name}: match {} over, seat {} placed {place}",
                outcome.match_id, outcome.seat
            );
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("{name}: {err}");
            ExitCode::from(match err {
                Error::Refused { .. } => 2,
                Error::Unreachable { .. } => 3,
                Error::Rpc(_) => 4,
                Error::BadAddress(_) | Error::Usage(_) => 64,
                Error::Runtime(_) => 1,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str], env: &[(&str, &str)]) -> Result<Parsed, String> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parse_args(args.iter().map(|a| a.to_string()), |key| {
            env.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
        })
    }

    fn run_args(address: &str, token: &str, misbehave: bool) -> Parsed {
        Parsed::Run(Args {
            address: address.into(),
            token: token.into(),
            misbehave,
            quiet: false,
            ..Args::default()
        })
    }

    #[test]
    fn options_win_over_the_environment() {
        let env = [("PUSOY_ADDRESS", "env:1"), ("PUSOY_TOKEN", "envtok")];
        assert_eq!(parse(&[], &env), Ok(run_args("env:1", "envtok", false)));
        assert_eq!(
            parse(
                &["--address", "cli:2", "--token=clitok", "--misbehave"],
                &env
            ),
            Ok(run_args("cli:2", "clitok", true))
        );
    }

    #[test]
    fn misbehave_from_the_environment_and_default_address() {
        let env = [("PUSOY_TOKEN", "t"), ("PUSOY_MISBEHAVE", "1")];
        assert_eq!(parse(&[], &env), Ok(run_args(DEFAULT_ADDRESS, "t", true)));
        let env = [("PUSOY_TOKEN", "t"), ("PUSOY_MISBEHAVE", "0")];
        assert_eq!(parse(&[], &env), Ok(run_args(DEFAULT_ADDRESS, "t", false)));
    }

    #[test]
    fn batch_events_from_the_flag_or_the_environment() {
        let batched = |args: &[&str], env: &[(&str, &str)]| match parse(args, env) {
            Ok(Parsed::Run(a)) => a.batch_events,
            other => panic!("{other:?}"),
        };
        assert!(!batched(&[], &[("PUSOY_TOKEN", "t")]));
        assert!(batched(&["--batch-events"], &[("PUSOY_TOKEN", "t")]));
        assert!(batched(&[], &[("PUSOY_TOKEN", "t"), ("PUSOY_BATCH_EVENTS", "1")]));
        assert!(!batched(&[], &[("PUSOY_TOKEN", "t"), ("PUSOY_BATCH_EVENTS", "0")]));
    }

    #[test]
    fn bad_command_lines() {
        assert!(parse(&[], &[]).unwrap_err().contains("token"));
        assert!(
            parse(&["--token"], &[])
                .unwrap_err()
                .contains("needs a value")
        );
        assert!(
            parse(&["--token", "t", "--bogus"], &[])
                .unwrap_err()
                .contains("--bogus")
        );
        assert_eq!(parse(&["--help"], &[]), Ok(Parsed::Help));
    }
}
