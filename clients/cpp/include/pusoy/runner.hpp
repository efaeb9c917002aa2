// Connect a Bot to a referee and play its seat to the end of the match (docs/kits.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>

#include <grpcpp/support/status.h>

#include "pusoy/bot.hpp"
#include "pusoy/options.hpp"
#include "pusoy/proto.hpp"

namespace pusoy {

/// The referee refused the seat (exit 2).
class Refused : public std::runtime_error {
public:
    explicit Refused(pb::Refusal refusal);
    const pb::Refusal& refusal() const { return refusal_; }
    pb::RefusalReason reason() const { return refusal_.reason(); }

private:
    pb::Refusal refusal_;
};

/// The referee could not be reached (or reached again) within the reconnect window (exit 3).
class Unreachable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The stream failed with a status that a reconnect cannot fix, e.g. UNIMPLEMENTED (exit 4).
class RpcFailed : public std::runtime_error {
public:
    explicit RpcFailed(const grpc::Status& status);
    grpc::StatusCode code() const { return code_; }

private:
    grpc::StatusCode code_;
};

/// The wait before the n-th retry after a drop (n from 1; the first retry is at once):
/// a random time in [d/2, d], d = min(1000, 50 * 2^(n-1)) ms.
std::chrono::milliseconds backoff_delay(int n, std::mt19937_64& rng);

/// Whether a stream that ended with this status (before match_ended) is retried:
/// OK, UNAVAILABLE, CANCELLED, INTERNAL, UNKNOWN, DEADLINE_EXCEEDED.
bool is_retryable(grpc::StatusCode code);

/// "UNAVAILABLE: message".
std::string status_text(const grpc::Status& status);

/// Plays the seat of options.token until the match ends, reconnecting after dropped
/// streams. Blocks; throws Refused, Unreachable or RpcFailed.
Outcome run(Bot& bot, const Options& options);

}  // namespace pusoy
