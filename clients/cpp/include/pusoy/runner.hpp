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

/// The first word of the line written when the bot's own code throws on a turn (choose or
/// on_rejected) and the fallback goes out instead (docs/kits.md, section 5): the referee
/// finds it in the bot's output and names it.
inline constexpr const char* kRaisedMarker = "PUSOY_BOT_RAISED";

/// How many characters (bytes of UTF-8 kept whole) of what was thrown the line keeps.
inline constexpr std::size_t kRaisedMaxChars = 200;

/// The marker line for `error` (what was thrown: "std::runtime_error: boom") in the bot's
/// `call` ("choose" or "on_rejected") on turn `turn_id`: one line, control characters made
/// spaces, at most kRaisedMaxChars characters of the error.
std::string raised_line(std::uint64_t turn_id, const std::string& call, const std::string& error);

/// What is being thrown, inside a catch block: the exception's type (demangled, with
/// g++ and clang) and, for a std::exception, ": " and its what().
std::string current_exception_text();

/// Plays the seat of options.token until the match ends, reconnecting after dropped
/// streams. Blocks; throws Refused, Unreachable or RpcFailed.
Outcome run(Bot& bot, const Options& options);

}  // namespace pusoy
