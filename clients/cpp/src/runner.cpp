// The stream loop. Three threads per run:
//   - the bot thread (the caller of run()): takes what the referee sent, in order, from
//     a queue and calls the bot's methods; it sends the bot's answers;
//   - the network thread: opens each stream (a fresh ClientContext every time), says
//     Hello, blocks in Read(), keeps the protocol state and reconnects. It never waits
//     for the bot, so a drill or a dropped stream is answered with a reconnect at once
//     even while choose() is still thinking;
//   - the watchdog: sends fallback(turn) when the bot's answer is not in by the turn's
//     due time (armed by the network thread as soon as the prompt arrives), and cancels
//     a stream that the referee fails to end after match_ended or a refusal.
#include "pusoy/runner.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "pusoy/messages.hpp"

namespace pusoy {

Refused::Refused(pb::Refusal refusal)
    : std::runtime_error("refused: " + refusal_name(refusal.reason()) +
                         (refusal.message().empty() ? "" : ": " + refusal.message())),
      refusal_(std::move(refusal)) {}

namespace {

std::string status_text(const grpc::Status& status) {
    static const char* const kNames[] = {
        "OK",        "CANCELLED",          "UNKNOWN",      "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED", "NOT_FOUND",  "ALREADY_EXISTS", "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
        "UNIMPLEMENTED", "INTERNAL",       "UNAVAILABLE",  "DATA_LOSS",
        "UNAUTHENTICATED"};
    const int code = static_cast<int>(status.error_code());
    std::string text = (code >= 0 && code <= 16) ? kNames[code] : std::to_string(code);
    if (!status.error_message().empty()) text += ": " + status.error_message();
    return text;
}

}  // namespace

RpcFailed::RpcFailed(const grpc::Status& status)
    : std::runtime_error("the stream failed: " + status_text(status)),
      code_(status.error_code()) {}

std::chrono::milliseconds Backoff::next() {
    const auto delay = current_;
    current_ = std::min(std::max(current_ * 2, initial_), max_);
    return delay;
}

bool is_retryable(grpc::StatusCode code) {
    switch (code) {
        case grpc::StatusCode::OK:  // a clean end before match_ended
        case grpc::StatusCode::UNAVAILABLE:
        case grpc::StatusCode::CANCELLED:
        case grpc::StatusCode::INTERNAL:
        case grpc::StatusCode::UNKNOWN:
            return true;
        default:
            return false;
    }
}

namespace {

using Clock = std::chrono::steady_clock;
using WallClock = std::chrono::system_clock;
using Stream = grpc::ClientReaderWriter<pb::PlayRequest, pb::PlayResponse>;
using Logger = std::function<void(const std::string&)>;
using std::chrono::milliseconds;

/// What the network thread hands to the bot thread.
struct Item {
    enum class Kind { kWelcome, kSnapshot, kEvent, kPrompt, kRejected, kDone, kFailed };

    explicit Item(Kind k, std::uint64_t on = 0) : kind(k), stream(on) {}
    Item(Kind k, std::uint64_t on, pb::PlayResponse m) : kind(k), stream(on), message(std::move(m)) {}

    Kind kind;
    std::uint64_t stream = 0;          // which stream it came on
    pb::PlayResponse message;          // welcome, snapshot, event or result
    std::optional<TurnView> turn;      // prompt, rejected
    bool answered = false;             // prompt: --misbehave answered it already
    MatchOutcome outcome;              // done
    std::exception_ptr error;          // failed
};

/// A queue from the network thread to the bot thread.
class Mailbox {
public:
    void push(Item item) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            queue_.push_back(std::move(item));
        }
        cv_.notify_one();
    }

    Item pop() {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return !queue_.empty(); });
        Item item = std::move(queue_.front());
        queue_.pop_front();
        return item;
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<Item> queue_;
};

/// The writing side of the current stream, shared by the three threads. It holds the
/// one answer owed to the referee: whoever settles it first sends it (the bot in time,
/// or the watchdog with the fallback at the due time); the other's answer is dropped.
class Outbox {
public:
    explicit Outbox(Logger log) : log_(std::move(log)), watchdog_([this] { watch(); }) {}

    ~Outbox() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        cv_.notify_all();
        watchdog_.join();
    }

    Outbox(const Outbox&) = delete;
    Outbox& operator=(const Outbox&) = delete;

    void attach(Stream* stream, grpc::ClientContext* context, std::uint64_t id) {
        std::lock_guard<std::mutex> lock(mutex_);
        stream_ = stream;
        context_ = context;
        stream_id_ = id;
        pending_.reset();
        cancel_at_.reset();
    }

    /// The stream is over: no more writes, and an answer owed on it is forgotten.
    void detach() {
        std::lock_guard<std::mutex> lock(mutex_);
        stream_ = nullptr;
        context_ = nullptr;
        pending_.reset();
        cancel_at_.reset();
    }

    /// Sends now; false when the stream is gone.
    bool send(const pb::PlayRequest& request) {
        std::lock_guard<std::mutex> lock(mutex_);
        return write_locked(request);
    }

    /// An answer to `turn` is owed on stream `id`; unless settled by `due`, the
    /// watchdog sends fallback(turn).
    void arm(std::uint64_t id, const TurnView& turn, Clock::time_point due) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (id != stream_id_ || stream_ == nullptr) return;
            pending_ = Pending{turn, due};
        }
        cv_.notify_all();
    }

    /// Whether an answer to this turn is still owed (and the bot may still give it).
    bool owed(std::uint64_t id, std::uint64_t turn_id) {
        std::lock_guard<std::mutex> lock(mutex_);
        return owed_locked(id, turn_id);
    }

    /// Sends the bot's answer if it is still owed; false when it came too late.
    bool settle(std::uint64_t id, std::uint64_t turn_id, const Choice& choice) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!owed_locked(id, turn_id)) return false;
        pending_.reset();
        write_locked(make_action(turn_id, choice));
        return true;
    }

    /// Cancels the stream at `when` unless it is detached first.
    void cancel_at(Clock::time_point when) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (context_ != nullptr) cancel_at_ = when;
        }
        cv_.notify_all();
    }

private:
    struct Pending {
        TurnView turn;
        Clock::time_point due;
    };

    bool owed_locked(std::uint64_t id, std::uint64_t turn_id) const {
        return id == stream_id_ && pending_ && pending_->turn.turn_id == turn_id;
    }

    bool write_locked(const pb::PlayRequest& request) {
        return stream_ != nullptr && stream_->Write(request);
    }

    void watch() {
        std::unique_lock<std::mutex> lock(mutex_);
        while (!stop_) {
            const auto now = Clock::now();
            if (pending_ && now >= pending_->due) {
                const Choice safe = fallback(pending_->turn);
                const auto turn_id = pending_->turn.turn_id;
                pending_.reset();
                write_locked(make_action(turn_id, safe));
                log_("turn " + std::to_string(turn_id) +
                     ": no answer from the bot by the deadline, sent the fallback " +
                     to_string(safe));
                continue;
            }
            if (cancel_at_ && now >= *cancel_at_) {
                cancel_at_.reset();
                if (context_ != nullptr) context_->TryCancel();
                continue;
            }
            auto wake = Clock::time_point::max();
            if (pending_) wake = std::min(wake, pending_->due);
            if (cancel_at_) wake = std::min(wake, *cancel_at_);
            if (wake == Clock::time_point::max()) {
                cv_.wait(lock);
            } else {
                cv_.wait_until(lock, wake);
            }
        }
    }

    Logger log_;
    std::mutex mutex_;
    std::condition_variable cv_;
    Stream* stream_ = nullptr;
    grpc::ClientContext* context_ = nullptr;
    std::uint64_t stream_id_ = 0;
    std::optional<Pending> pending_;
    std::optional<Clock::time_point> cancel_at_;
    bool stop_ = false;
    std::thread watchdog_;  // last: starts after the members it uses
};

class Session {
public:
    Session(Bot& bot, const RunOptions& options)
        : bot_(bot),
          options_(options),
          name_(bot.name()),
          want_legal_plays_(bot.want_legal_plays()),
          log_(make_logger()),
          outbox_(log_) {}

    /// The bot thread: runs the network thread and serves the bot until the end.
    MatchOutcome run();

private:
    enum class End { kDropped, kRefused, kMatchEnded };
    struct StreamEnd {
        End end = End::kDropped;
        grpc::Status status;
        pb::Refusal refusal;
        bool seated = false;
    };

    Logger make_logger() const {
        if (options_.log) return options_.log;
        auto mutex = std::make_shared<std::mutex>();
        std::string prefix = "[" + name_ + "] ";
        return [mutex, prefix](const std::string& line) {
            std::lock_guard<std::mutex> lock(*mutex);
            std::cerr << prefix << line << std::endl;
        };
    }

    // The network thread.
    void network();
    MatchOutcome connect_and_play();
    StreamEnd play_once(pb::PlayService::Stub& stub);
    void on_prompt(std::uint64_t stream, const pb::PlayResponse& message,
                   Clock::time_point at, WallClock::time_point wall);
    void on_result(std::uint64_t stream, const pb::PlayResponse& message);
    Clock::time_point due_time(const TurnView& turn, Clock::time_point at,
                               WallClock::time_point wall) const;

    // The bot thread.
    template <typename Decide>
    void answer(const Item& item, const char* what, Decide decide);
    template <typename Hook>
    void call_hook(const char* what, Hook hook);

    Bot& bot_;
    const RunOptions& options_;
    const std::string name_;
    const bool want_legal_plays_;
    Logger log_;
    Outbox outbox_;
    Mailbox mailbox_;

    // Network thread only.
    std::uint64_t stream_id_ = 0;
    std::uint32_t seat_ = 0;
    std::string match_id_;
    bool ever_seated_ = false;
    std::optional<pb::MatchEnded> ended_;
    std::optional<TurnView> current_;  // the prompt in force, for retries
    Clock::time_point current_due_{};
    std::optional<std::uint32_t> misbehaved_hand_;  // the last hand --misbehave spoiled
};

// --- The bot thread ------------------------------------------------------------------

template <typename Hook>
void Session::call_hook(const char* what, Hook hook) {
    try {
        hook();
    } catch (const std::exception& e) {
        log_(std::string(what) + " threw: " + e.what());
    } catch (...) {
        log_(std::string(what) + " threw an unknown exception");
    }
}

template <typename Decide>
void Session::answer(const Item& item, const char* what, Decide decide) {
    const TurnView& turn = *item.turn;
    if (!outbox_.owed(item.stream, turn.turn_id)) return;  // the watchdog answered already
    Choice choice;
    try {
        choice = decide();
    } catch (const std::exception& e) {
        log_(std::string(what) + " threw: " + e.what() + "; sending the fallback");
        choice = fallback(turn);
    } catch (...) {
        log_(std::string(what) + " threw; sending the fallback");
        choice = fallback(turn);
    }
    if (!outbox_.settle(item.stream, turn.turn_id, choice)) {
        log_("turn " + std::to_string(turn.turn_id) + ": " + what + " returned " +
             to_string(choice) + " too late (deadline passed or stream gone); it was not sent");
    }
}

MatchOutcome Session::run() {
    std::thread network_thread([this] { network(); });
    for (;;) {
        Item item = mailbox_.pop();
        switch (item.kind) {
            case Item::Kind::kWelcome:
                call_hook("on_welcome()", [&] { bot_.on_welcome(item.message.welcome()); });
                break;
            case Item::Kind::kSnapshot:
                call_hook("on_snapshot()", [&] { bot_.on_snapshot(item.message.snapshot()); });
                break;
            case Item::Kind::kEvent:
                call_hook("on_event()", [&] { bot_.on_event(item.message.event()); });
                break;
            case Item::Kind::kPrompt:
                if (!item.answered) answer(item, "choose()", [&] { return bot_.choose(*item.turn); });
                break;
            case Item::Kind::kRejected:
                answer(item, "on_rejected()",
                       [&] { return bot_.on_rejected(*item.turn, item.message.result()); });
                break;
            case Item::Kind::kDone:
                network_thread.join();
                return std::move(item.outcome);
            case Item::Kind::kFailed:
                network_thread.join();
                std::rethrow_exception(item.error);
        }
    }
}

// --- The network thread --------------------------------------------------------------

void Session::network() {
    Item last(Item::Kind::kDone);
    try {
        last.outcome = connect_and_play();
    } catch (...) {
        last.kind = Item::Kind::kFailed;
        last.error = std::current_exception();
    }
    mailbox_.push(std::move(last));
}

Clock::time_point Session::due_time(const TurnView& turn, Clock::time_point at,
                                    WallClock::time_point wall) const {
    // Measured from the arrival of the prompt; never longer than the turn's limit, in
    // case the two clocks disagree.
    auto remaining = std::chrono::duration_cast<milliseconds>(turn.deadline - wall);
    remaining = std::max(remaining, milliseconds{0});
    if (turn.turn_time.count() > 0) remaining = std::min(remaining, turn.turn_time);
    if (options_.use_time_bank) remaining += turn.time_bank;
    return at + remaining - options_.deadline_margin;
}

void Session::on_prompt(std::uint64_t stream, const pb::PlayResponse& message,
                        Clock::time_point at, WallClock::time_point wall) {
    Item item(Item::Kind::kPrompt, stream);
    TurnView turn = TurnView::from_proto(message.prompt());
    const auto due = due_time(turn, at, wall);
    turn.answer_by = due;
    current_ = turn;
    current_due_ = due;

    if (options_.misbehave && misbehaved_hand_ != turn.hand_number) {
        misbehaved_hand_ = turn.hand_number;
        const Choice bad = misbehave_choice(turn);
        log_("turn " + std::to_string(turn.turn_id) + ": misbehaving on purpose, playing " +
             to_string(bad) + " (not in the hand)");
        outbox_.arm(stream, turn, due);
        outbox_.settle(stream, turn.turn_id, bad);
        item.answered = true;
    } else {
        outbox_.arm(stream, turn, due);
    }
    item.turn = std::move(turn);
    mailbox_.push(std::move(item));
}

void Session::on_result(std::uint64_t stream, const pb::PlayResponse& message) {
    const auto& result = message.result();
    if (result.accepted()) return;
    log_("turn " + std::to_string(result.turn_id()) + ": rejected " +
         reason_name(result.reason()) + " (" + result.message() + "), attempts left " +
         std::to_string(result.attempts_left()));
    if (!current_ || result.turn_id() != current_->turn_id || result.attempts_left() == 0) return;
    current_->attempts_left = result.attempts_left();
    outbox_.arm(stream, *current_, current_due_);
    Item item(Item::Kind::kRejected, stream, message);
    item.turn = *current_;
    mailbox_.push(std::move(item));
}

Session::StreamEnd Session::play_once(pb::PlayService::Stub& stub) {
    StreamEnd result;
    grpc::ClientContext context;  // a fresh one for every stream
    std::unique_ptr<Stream> stream = stub.Play(&context);
    const std::uint64_t id = ++stream_id_;
    current_.reset();  // a prompt of an earlier stream cannot be answered any more
    outbox_.attach(stream.get(), &context, id);
    outbox_.send(make_hello(options_.token, name_, want_legal_plays_));

    pb::PlayResponse message;
    while (stream->Read(&message)) {
        const auto at = Clock::now();
        const auto wall = WallClock::now();
        if (result.end != End::kDropped) continue;  // over: wait for the referee to close
        switch (message.kind_case()) {
            case pb::PlayResponse::kWelcome: {
                const auto& welcome = message.welcome();
                seat_ = welcome.seat();
                match_id_ = welcome.match_id();
                result.seated = true;
                ever_seated_ = true;
                log_(std::string(welcome.reconnect() ? "reconnected" : "seated") + ": seat " +
                     std::to_string(seat_) + " of match " + match_id_);
                mailbox_.push(Item(Item::Kind::kWelcome, id, message));
                break;
            }
            case pb::PlayResponse::kRefusal:
                result.end = End::kRefused;
                result.refusal = message.refusal();
                break;
            case pb::PlayResponse::kSnapshot:
                mailbox_.push(Item(Item::Kind::kSnapshot, id, message));
                break;
            case pb::PlayResponse::kEvent:
                mailbox_.push(Item(Item::Kind::kEvent, id, message));
                if (message.event().has_match_ended()) {
                    ended_ = message.event().match_ended();
                    result.end = End::kMatchEnded;
                }
                break;
            case pb::PlayResponse::kPrompt:
                on_prompt(id, message, at, wall);
                break;
            case pb::PlayResponse::kResult:
                on_result(id, message);
                break;
            default:  // a kind this version does not know: skip it
                break;
        }
        // After a refusal or match_ended the referee ends the stream; if it does not,
        // the watchdog cancels it.
        if (result.end != End::kDropped) outbox_.cancel_at(Clock::now() + std::chrono::seconds{2});
    }
    outbox_.detach();
    result.status = stream->Finish();
    return result;
}

MatchOutcome Session::connect_and_play() {
    grpc::ChannelArguments args;
    // Let the channel itself retry a lost connection as fast as our own loop does.
    const int initial = static_cast<int>(options_.backoff_initial.count());
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, initial);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, initial);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, static_cast<int>(options_.backoff_max.count()));
    auto channel =
        grpc::CreateCustomChannel(options_.address, grpc::InsecureChannelCredentials(), args);
    auto stub = pb::PlayService::NewStub(channel);

    auto outcome = [&](std::optional<pb::MatchEnded> ended) {
        MatchOutcome out;
        out.seat = seat_;
        out.match_id = match_id_;
        out.ended = std::move(ended);
        return out;
    };

    Backoff backoff(options_.backoff_initial, options_.backoff_max);
    auto last_ok = Clock::now();
    bool first_attempt = true;
    std::string last_logged;  // log a problem when it changes, then every few seconds
    auto last_log_time = Clock::time_point{};
    int attempts = 0;
    for (;;) {
        StreamEnd end = play_once(*stub);
        if (end.seated) {
            last_ok = Clock::now();
            backoff.reset();
            last_logged.clear();
            attempts = 0;
        }
        std::string problem;
        std::string kind;  // what to compare to throttle the log
        switch (end.end) {
            case End::kMatchEnded:
                return outcome(ended_);
            case End::kRefused: {
                const auto reason = end.refusal.reason();
                if (reason == pb::REFUSAL_REASON_MATCH_OVER && ever_seated_) {
                    log_("the match ended while the bot was disconnected");
                    return outcome(std::nullopt);
                }
                // Right after a drop the referee may not have noticed yet that our
                // previous stream is gone: retry, within the window.
                if (reason != pb::REFUSAL_REASON_SEAT_TAKEN || first_attempt) {
                    throw Refused(end.refusal);
                }
                if (Clock::now() - last_ok > options_.reconnect_window) throw Refused(end.refusal);
                problem = "seat still taken by our previous stream";
                kind = "seat taken";
                break;
            }
            case End::kDropped:
                if (!is_retryable(end.status.error_code())) throw RpcFailed(end.status);
                problem = end.status.ok() ? "stream closed by the referee" : status_text(end.status);
                kind = std::to_string(static_cast<int>(end.status.error_code()));
                break;
        }
        first_attempt = false;
        if (Clock::now() - last_ok > options_.reconnect_window) {
            std::ostringstream text;
            text << "could not reach the referee at " << options_.address << " within "
                 << options_.reconnect_window.count() << " ms (" << problem << ")";
            throw Unreachable(text.str());
        }
        const auto delay = backoff.next();
        ++attempts;
        if (kind != last_logged || Clock::now() - last_log_time >= std::chrono::seconds{5}) {
            log_(problem + "; reconnecting" +
                 (delay.count() ? " in " + std::to_string(delay.count()) + " ms" : std::string{}) +
                 (attempts > 1 ? " (attempt " + std::to_string(attempts) + ")" : std::string{}));
            last_logged = kind;
            last_log_time = Clock::now();
        }
        std::this_thread::sleep_for(delay);
    }
}

}  // namespace

MatchOutcome run(Bot& bot, const RunOptions& options) {
    Session session(bot, options);
    return session.run();
}

}  // namespace pusoy
