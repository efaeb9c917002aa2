// Connection settings (Options), the command line of every bot, and main() for a bot.
// docs/kits.md, section 7.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pusoy/bot.hpp"

namespace pusoy {

struct Options {
    /// host:port of the referee.
    std::string address = "127.0.0.1:50051";
    /// The seat's secret token.
    std::string token;
    /// How long to try to hold the seat again, from its loss (or from the start).
    std::chrono::milliseconds reconnect_window{60000};
    /// Answer this long before the budget's end (the time to send the answer).
    std::chrono::milliseconds safety_margin{50};
    /// TLS: with the system's CAs unless tls_ca names a PEM bundle; mutual TLS with
    /// tls_cert and tls_key (PEM contents, read by parse_command_line from the files).
    bool tls = false;
    std::string tls_ca_pem;
    std::string tls_cert_pem;
    std::string tls_key_pem;
    /// The name checked in the referee's certificate (default: the address's host).
    std::string tls_server_name;
    /// Ask for events batched into the prompts (Hello.batch_events).
    bool batch_events = false;
    /// Sample bots: the first answer of each hand is a card not held (run_main wraps
    /// the bot so).
    bool misbehave = false;
    /// Where diagnostics go; default: one line each on stderr, prefixed with the bot's name.
    std::function<void(const std::string&)> log;
    /// Where the raised marker line goes (raised_line; docs/kits.md, section 5); default:
    /// stderr, as it is.
    std::function<void(const std::string&)> raised;
};

/// A bad command line: exit 64 (EX_USAGE).
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct CommandLine {
    Options options;
    bool help = false;
};

using Getenv = std::function<std::optional<std::string>(const std::string&)>;

/// Reads the flags of docs/kits.md over their PUSOY_* variables (the flag wins) over
/// `defaults`, and the TLS files. Throws UsageError (bad flag or value, no token, an
/// unreadable TLS file, a certificate without its key).
CommandLine parse_command_line(const std::vector<std::string>& args, const Getenv& getenv,
                               const Options& defaults = {});

/// The usage text.
std::string usage(const std::string& program);

/// The process's environment, for parse_command_line.
std::optional<std::string> process_getenv(const std::string& name);

/// main() for a bot: parses the command line, plays the seat to the match's end and
/// returns the exit code: 0 the match ended, 1 internal error, 2 refused, 3 referee
/// unreachable, 4 the stream failed for good, 64 usage error.
int run_main(Bot& bot, int argc, char** argv, const Options& defaults = {});

/// Wraps a bot so that its first answer in each hand is a card it does not hold (the
/// referee rejects it: CARD_NOT_IN_HAND); run_main plays it with --misbehave.
class MisbehavingBot final : public Bot {
public:
    explicit MisbehavingBot(Bot& inner) : inner_(inner) {}
    Choice choose(const Prompt& prompt) override {
        if (spoiled_hand_ != prompt.hand_number) {
            spoiled_hand_ = prompt.hand_number;
            return misbehave_choice(prompt);
        }
        return inner_.choose(prompt);
    }
    std::string name() const override { return inner_.name(); }
    bool want_legal_plays() const override { return inner_.want_legal_plays(); }
    bool use_time_bank() const override { return inner_.use_time_bank(); }
    Choice on_rejected(const Prompt& p, const Rejection& r) override { return inner_.on_rejected(p, r); }
    void on_welcome(const pb::Welcome& w) override { inner_.on_welcome(w); }
    void on_snapshot(const pb::Snapshot& s) override { inner_.on_snapshot(s); }
    void on_event(const pb::Event& e) override { inner_.on_event(e); }

private:
    Bot& inner_;
    std::optional<std::uint32_t> spoiled_hand_;
};

/// Exit codes (docs/kits.md, section 7).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitRefused = 2;
inline constexpr int kExitUnreachable = 3;
inline constexpr int kExitRpc = 4;
inline constexpr int kExitUsage = 64;

}  // namespace pusoy
