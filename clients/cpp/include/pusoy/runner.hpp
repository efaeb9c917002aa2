// Connect a Bot to a referee and play its seat to the end of the match.
#pragma once

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>

#include <grpcpp/support/status.h>

#include "pusoy/bot.hpp"
#include "pusoy/proto.hpp"

namespace pusoy {

struct RunOptions {
    /// host:port of the referee.
    std::string address = "127.0.0.1:50051";
    /// The seat's secret token.
    std::string token;
    /// Send, as the first answer in each hand, one card not in the hand (to check that
    /// rejections are recovered from).
    bool misbehave = false;
    /// Send the fallback this long before the deadline when choose() runs late.
    std::chrono::milliseconds deadline_margin{50};
    /// Count the seat's time bank as thinking time (as the referee does).
    bool use_time_bank = true;
    /// Give up after this long without holding the seat (first connect or reconnects).
    std::chrono::milliseconds reconnect_window{30000};
    /// Reconnect at once after a drop, then wait backoff_initial, doubling to backoff_max.
    std::chrono::milliseconds backoff_initial{50};
    std::chrono::milliseconds backoff_max{1000};
    /// Where diagnostics go; default: one line on stderr each.
    std::function<void(const std::string&)> log;
};

/// The referee refused the seat (bad token, seat taken for good, version, match over).
class Refused : public std::runtime_error {
public:
    explicit Refused(pb::Refusal refusal);
    const pb::Refusal& refusal() const { return refusal_; }
    pb::RefusalReason reason() const { return refusal_.reason(); }

private:
    pb::Refusal refusal_;
};

/// The referee could not be reached (or reached again) within the reconnect window.
class Unreachable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The stream failed with a status that a reconnect cannot fix (e.g. UNIMPLEMENTED).
class RpcFailed : public std::runtime_error {
public:
    explicit RpcFailed(const grpc::Status& status);
    grpc::StatusCode code() const { return code_; }

private:
    grpc::StatusCode code_;
};

/// The delays between reconnect attempts: 0 (at once), then initial, doubling to max.
class Backoff {
public:
    Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max)
        : initial_(initial), max_(max) {}
    std::chrono::milliseconds next();
    void reset() { current_ = std::chrono::milliseconds{0}; }

private:
    std::chrono::milliseconds initial_, max_, current_{0};
};

/// Whether a stream that ended with this status (before match_ended) is worth a reconnect.
bool is_retryable(grpc::StatusCode code);

/// Plays the seat of options.token until the match ends, reconnecting after dropped
/// streams. Blocks; throws Refused, Unreachable or RpcFailed.
MatchOutcome run(Bot& bot, const RunOptions& options);

}  // namespace pusoy
