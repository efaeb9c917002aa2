// The stream loop. Three threads per run:
//   - the session thread (the caller of run()): reads the inbox in order, calls the
//     bot's methods and sends its answers;
//   - a reader thread per stream: blocks in Read() and fills the inbox;
//   - the watchdog (one per run): sends fallback(turn) when the bot's answer is not in
//     by the turn's due time, so a slow choose() never costs a timeout.
// Every stream has its own ClientContext; the channel is shared by all of them.
#include "pusoy/runner.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
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
        "OK",       "CANCELLED",          "UNKNOWN",          "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",   "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
        "UNIMPLEMENTED", "INTERNAL",      "UNAVAILABLE",      "DATA_LOSS",
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

/// One message from the referee, with the time it arrived.
struct Incoming {
    pb::PlayResponse message;
    Clock::time_point at;
    WallClock::time_point wall;
};

/// The reader thread's messages, in order, then the end of the stream.
class Inbox {
public:
    void push(pb::PlayResponse message) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            queue_.push_back(Incoming{std::move(message), Clock::now(), WallClock::now()});
        }
        cv_.notify_all();
    }

    void close() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            closed_ = true;
        }
        cv_.notify_all();
    }

    /// The next message; empty once the stream has ended and every message was taken.
    std::optional<Incoming> pop() {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return closed_ || !queue_.empty(); });
        if (queue_.empty()) return std::nullopt;
        Incoming next = std::move(queue_.front());
        queue_.pop_front();
        return next;
    }

    /// Waits for the end of the stream until `until`; true when it has ended.
    bool wait_closed(Clock::time_point until) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_until(lock, until, [&] { return closed_; });
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<Incoming> queue_;
    bool closed_ = false;
};

/// The writing side of the current stream, shared by the session thread and the
/// watchdog. It also holds the one answer being computed: whoever settles it first
/// (the bot in time, or the watchdog with the fallback at the due time) sends it.
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

    void attach(Stream* stream) {
        std::lock_guard<std::mutex> lock(mutex_);
        stream_ = stream;
        pending_.reset();
    }

    /// No more writes on this stream; an answer in progress is dropped.
    void detach() {
        std::lock_guard<std::mutex> lock(mutex_);
        stream_ = nullptr;
        pending_.reset();
    }

    /// Sends now; false when the stream is gone.
    bool send(const pb::PlayRequest& request) {
        std::lock_guard<std::mutex> lock(mutex_);
        return write_locked(request);
    }

    /// An answer to `turn` is being computed; unless settled by `due`, the watchdog
    /// sends fallback(turn).
    void begin(const TurnView& turn, Clock::time_point due) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            pending_ = turn;
            due_ = due;
        }
        cv_.notify_all();
    }

    /// Sends the bot's answer; false when the watchdog already answered (or the
    /// stream was detached meanwhile), and the answer is dropped.
    bool settle(const Choice& choice) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!pending_) return false;
        const auto turn_id = pending_->turn_id;
        pending_.reset();
        write_locked(make_action(turn_id, choice));
        return true;
    }

private:
    bool write_locked(const pb::PlayRequest& request) {
        return stream_ != nullptr && stream_->Write(request);
    }

    void watch() {
        std::unique_lock<std::mutex> lock(mutex_);
        while (!stop_) {
            if (!pending_) {
                cv_.wait(lock);
                continue;
            }
            if (Clock::now() < due_) {
                cv_.wait_until(lock, due_);
                continue;
            }
            const Choice safe = fallback(*pending_);
            const auto turn_id = pending_->turn_id;
            pending_.reset();
            write_locked(make_action(turn_id, safe));
            log_("turn " + std::to_string(turn_id) + ": no answer by the deadline, sent the fallback " +
                 to_string(safe));
        }
    }

    Logger log_;
    std::mutex mutex_;
    std::condition_variable cv_;
    Stream* stream_ = nullptr;
    std::optional<TurnView> pending_;
    Clock::time_point due_{};
    bool stop_ = false;
    std::thread watchdog_;  // last: starts after the members it uses
};

class Session {
public:
    Session(Bot& bot, const RunOptions& options)
        : bot_(bot), options_(options), log_(make_logger()), outbox_(log_) {}

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
        std::string prefix = "[" + bot_.name() + "] ";
        return [mutex, prefix](const std::string& line) {
            std::lock_guard<std::mutex> lock(*mutex);
            std::cerr << prefix << line << std::endl;
        };
    }

    StreamEnd play_once(pb::PlayService::Stub& stub);
    void on_prompt(const Incoming& in);
    void on_result(const pb::ActionResult& result);
    template <typename Decide>
    void answer(const TurnView& turn, Clock::time_point due, const char* what, Decide decide);
    Clock::time_point due_time(const TurnView& turn, const Incoming& in) const;
    template <typename Hook>
    void call_hook(const char* what, Hook hook);

    MatchOutcome outcome(std::optional<pb::MatchEnded> ended) const {
        MatchOutcome out;
        out.seat = seat_;
        out.match_id = match_id_;
        out.ended = std::move(ended);
        return out;
    }

    Bot& bot_;
    const RunOptions& options_;
    Logger log_;
    Outbox outbox_;

    std::uint32_t seat_ = 0;
    std::string match_id_;
    bool ever_seated_ = false;
    std::optional<pb::MatchEnded> ended_;
    // The prompt in force and its due time, for answers after a rejection.
    std::optional<TurnView> current_;
    Clock::time_point current_due_{};
    // The last hand in which --misbehave sent its bad card.
    std::optional<std::uint32_t> misbehaved_hand_;
};

Clock::time_point Session::due_time(const TurnView& turn, const Incoming& in) const {
    // Measured from the arrival of the prompt, so time spent in the inbox counts.
    auto remaining = std::chrono::duration_cast<milliseconds>(turn.deadline - in.wall);
    remaining = std::max(remaining, milliseconds{0});
    if (turn.turn_time.count() > 0) remaining = std::min(remaining, turn.turn_time);
    if (options_.use_time_bank) remaining += turn.time_bank;
    return in.at + remaining - options_.deadline_margin;
}

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
void Session::answer(const TurnView& turn, Clock::time_point due, const char* what,
                     Decide decide) {
    if (Clock::now() >= due) {
        const Choice safe = fallback(turn);
        log_("turn " + std::to_string(turn.turn_id) + ": no time left to call " + what +
             ", sent the fallback " + to_string(safe));
        outbox_.send(make_action(turn.turn_id, safe));
        return;
    }
    outbox_.begin(turn, due);
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
    if (!outbox_.settle(choice)) {
        log_("turn " + std::to_string(turn.turn_id) + ": " + what + " returned " +
             to_string(choice) + " too late; it was not sent");
    }
}

void Session::on_prompt(const Incoming& in) {
    TurnView turn = TurnView::from_proto(in.message.prompt());
    const auto due = due_time(turn, in);
    turn.answer_by = due;
    current_ = turn;
    current_due_ = due;

    if (options_.misbehave && misbehaved_hand_ != turn.hand_number) {
        misbehaved_hand_ = turn.hand_number;
        const Choice bad = misbehave_choice(turn);
        log_("turn " + std::to_string(turn.turn_id) + ": misbehaving on purpose, playing " +
             to_string(bad) + " (not in the hand)");
        outbox_.send(make_action(turn.turn_id, bad));
        return;
    }
    answer(turn, due, "choose()", [&] { return bot_.choose(turn); });
}

void Session::on_result(const pb::ActionResult& result) {
    if (result.accepted()) return;
    log_("turn " + std::to_string(result.turn_id()) + ": rejected " +
         reason_name(result.reason()) + " (" + result.message() + "), attempts left " +
         std::to_string(result.attempts_left()));
    if (!current_ || result.turn_id() != current_->turn_id || result.attempts_left() == 0) return;
    current_->attempts_left = result.attempts_left();
    const TurnView turn = *current_;
    answer(turn, current_due_, "on_rejected()", [&] { return bot_.on_rejected(turn, result); });
}

Session::StreamEnd Session::play_once(pb::PlayService::Stub& stub) {
    StreamEnd result;
    grpc::ClientContext context;  // a fresh one for every stream
    std::unique_ptr<Stream> stream = stub.Play(&context);
    Inbox inbox;
    std::thread reader([&] {
        pb::PlayResponse message;
        while (stream->Read(&message)) inbox.push(std::move(message));
        inbox.close();
    });
    current_.reset();  // a prompt of an earlier stream cannot be answered any more
    outbox_.attach(stream.get());

    auto close_stream = [&] {
        outbox_.detach();
        // After a refusal or match_ended the referee ends the stream itself; anything
        // else (or a referee that does not) is cancelled.
        if (!inbox.wait_closed(Clock::now() + std::chrono::seconds{2})) context.TryCancel();
        reader.join();
        result.status = stream->Finish();
    };

    try {
        outbox_.send(make_hello(options_.token, bot_.name(), bot_.want_legal_plays()));
        while (auto in = inbox.pop()) {
            const auto& message = in->message;
            switch (message.kind_case()) {
                case pb::PlayResponse::kWelcome: {
                    const auto& welcome = message.welcome();
                    seat_ = welcome.seat();
                    match_id_ = welcome.match_id();
                    result.seated = true;
                    ever_seated_ = true;
                    log_(std::string(welcome.reconnect() ? "reconnected" : "seated") + ": seat " +
                         std::to_string(seat_) + " of match " + match_id_);
                    call_hook("on_welcome()", [&] { bot_.on_welcome(welcome); });
                    break;
                }
                case pb::PlayResponse::kRefusal:
                    result.end = End::kRefused;
                    result.refusal = message.refusal();
                    break;
                case pb::PlayResponse::kSnapshot:
                    call_hook("on_snapshot()", [&] { bot_.on_snapshot(message.snapshot()); });
                    break;
                case pb::PlayResponse::kEvent:
                    call_hook("on_event()", [&] { bot_.on_event(message.event()); });
                    if (message.event().has_match_ended()) {
                        ended_ = message.event().match_ended();
                        result.end = End::kMatchEnded;
                    }
                    break;
                case pb::PlayResponse::kPrompt:
                    on_prompt(*in);
                    break;
                case pb::PlayResponse::kResult:
                    on_result(message.result());
                    break;
                default:  // a kind this version does not know: skip it
                    break;
            }
            if (result.end != End::kDropped) break;
        }
    } catch (...) {
        close_stream();
        throw;
    }
    close_stream();
    return result;
}

MatchOutcome Session::run() {
    grpc::ChannelArguments args;
    // Let the channel itself retry a lost connection as fast as our own loop does.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, static_cast<int>(options_.backoff_initial.count()));
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, static_cast<int>(options_.backoff_initial.count()));
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, static_cast<int>(options_.backoff_max.count()));
    auto channel =
        grpc::CreateCustomChannel(options_.address, grpc::InsecureChannelCredentials(), args);
    auto stub = pb::PlayService::NewStub(channel);

    Backoff backoff(options_.backoff_initial, options_.backoff_max);
    auto last_ok = Clock::now();
    bool first_attempt = true;
    for (;;) {
        StreamEnd end = play_once(*stub);
        if (end.seated) {
            last_ok = Clock::now();
            backoff.reset();
        }
        std::string problem;
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
                problem = "seat still taken";
                break;
            }
            case End::kDropped:
                if (!is_retryable(end.status.error_code())) throw RpcFailed(end.status);
                problem = end.status.ok() ? "stream closed by the referee" : status_text(end.status);
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
        log_(problem + "; reconnecting" +
             (delay.count() ? " in " + std::to_string(delay.count()) + " ms" : std::string{}));
        std::this_thread::sleep_for(delay);
    }
}

}  // namespace

MatchOutcome run(Bot& bot, const RunOptions& options) {
    Session session(bot, options);
    return session.run();
}

}  // namespace pusoy
