// The stream loop (docs/kits.md, sections 3, 5 and 6). Three threads per run:
//   - the reader (the caller of run()): opens each stream, says Hello, reads every
//     message as it comes with its time of receipt, keeps the open turn, reconnects.
//     It never waits for the bot;
//   - the worker: runs every call into the bot (choose, on_rejected, the hooks), one at a
//     time, in the order the messages came;
//   - the timer: sends the fallback when the open turn's budget runs out before the bot
//     answered, and cancels a stream the referee does not end after match_ended.
// An answer is tied to its turn and attempt: whoever settles an attempt first (the
// worker in time, or the timer with the fallback) sends it; the other's is dropped.
#include "pusoy/runner.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <typeinfo>
#if defined(__GNUG__)
#include <cxxabi.h>
#endif
#include <condition_variable>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
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
    : std::runtime_error("the referee refused the seat: " + refusal_name(refusal.reason()) +
                         (refusal.message().empty() ? "" : " (" + refusal.message() + ")")),
      refusal_(std::move(refusal)) {}

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

RpcFailed::RpcFailed(const grpc::Status& status)
    : std::runtime_error("the stream failed: " + status_text(status)), code_(status.error_code()) {}

std::string raised_line(std::uint64_t turn_id, const std::string& call, const std::string& error) {
    std::string shown;
    std::size_t chars = 0;
    for (std::size_t i = 0; i < error.size() && chars < kRaisedMaxChars; ++chars) {
        const auto byte = static_cast<unsigned char>(error[i]);
        std::size_t len = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1;
        len = std::min(len, error.size() - i);
        const std::string piece = error.substr(i, len);
        const bool control = byte < 0x20 || byte == 0x7F ||
                             (len == 2 && byte == 0xC2 && static_cast<unsigned char>(piece[1]) < 0xA0) ||
                             piece == "\xE2\x80\xA8" || piece == "\xE2\x80\xA9";
        shown += control ? std::string(" ") : piece;
        i += len;
    }
    return std::string(kRaisedMarker) + " turn=" + std::to_string(turn_id) + " call=" + call +
           " error=" + shown;
}

std::string current_exception_text() {
    std::string type = "unknown";
#if defined(__GNUG__)
    if (const std::type_info* info = abi::__cxa_current_exception_type()) {
        int status = 0;
        char* name = abi::__cxa_demangle(info->name(), nullptr, nullptr, &status);
        type = status == 0 && name != nullptr ? name : info->name();
        std::free(name);
    }
#endif
    try {
        throw;
    } catch (const std::exception& e) {
        const std::string what = e.what();
        return what.empty() ? type : type + ": " + what;
    } catch (...) {
        return type;
    }
}

std::chrono::milliseconds backoff_delay(int n, std::mt19937_64& rng) {
    const long long d = std::min<long long>(1000, 50LL << std::min(std::max(n, 1) - 1, 20));
    std::uniform_int_distribution<long long> pick(d / 2, d);
    return std::chrono::milliseconds{pick(rng)};
}

bool is_retryable(grpc::StatusCode code) {
    switch (code) {
        case grpc::StatusCode::OK:  // a clean end before match_ended
        case grpc::StatusCode::UNAVAILABLE:
        case grpc::StatusCode::CANCELLED:
        case grpc::StatusCode::INTERNAL:
        case grpc::StatusCode::UNKNOWN:
        case grpc::StatusCode::DEADLINE_EXCEEDED:
            return true;
        default:
            return false;
    }
}

namespace {

using Clock = std::chrono::steady_clock;
using WallClock = std::chrono::system_clock;
using Stream = grpc::ClientReaderWriter<pb::PlayRequest, pb::PlayResponse>;
using Log = std::function<void(const std::string&)>;
using std::chrono::milliseconds;

/// How long the bot's last calls may take after match_ended, and the referee to end the
/// stream after that.
constexpr milliseconds kDrain{2000};
constexpr milliseconds kCloseWait{1000};

/// One thread that runs tasks in order. Its state is shared with the thread, so a bot
/// call that never returns cannot keep run() from returning: the thread is left behind.
class Worker {
public:
    Worker() : state_(std::make_shared<State>()) {
        std::thread([state = state_] { loop(state); }).detach();
    }
    ~Worker() { stop(); }
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    void submit(std::function<void()> task) {
        {
            std::lock_guard<std::mutex> lock(state_->mutex);
            if (state_->stopped) return;
            state_->tasks.push_back(std::move(task));
        }
        state_->wake.notify_one();
    }

    /// Waits until every queued task ran; false after `timeout`.
    bool drain(milliseconds timeout) {
        std::unique_lock<std::mutex> lock(state_->mutex);
        return state_->idle.wait_for(lock, timeout,
                                     [&] { return state_->tasks.empty() && !state_->busy; });
    }

    /// Drops the queued tasks; the thread ends after the one it runs, if any.
    void stop() {
        {
            std::lock_guard<std::mutex> lock(state_->mutex);
            state_->stopped = true;
            state_->tasks.clear();
        }
        state_->wake.notify_all();
    }

private:
    struct State {
        std::mutex mutex;
        std::condition_variable wake, idle;
        std::deque<std::function<void()>> tasks;
        bool busy = false;
        bool stopped = false;
    };

    static void loop(const std::shared_ptr<State>& state) {
        for (;;) {
            std::function<void()> task;
            {
                std::unique_lock<std::mutex> lock(state->mutex);
                state->wake.wait(lock, [&] { return state->stopped || !state->tasks.empty(); });
                if (state->stopped) return;
                task = std::move(state->tasks.front());
                state->tasks.pop_front();
                state->busy = true;
            }
            task();
            task = nullptr;  // outside the lock: it may hold the last reference to the session
            {
                std::lock_guard<std::mutex> lock(state->mutex);
                state->busy = false;
            }
            state->idle.notify_all();
        }
    }

    std::shared_ptr<State> state_;
};

/// Runs callbacks at given times on one thread. cancel() never waits for a callback.
class Timer {
public:
    Timer() : thread_([this] { loop(); }) {}
    ~Timer() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        thread_.join();
    }
    Timer(const Timer&) = delete;
    Timer& operator=(const Timer&) = delete;

    std::uint64_t schedule(Clock::time_point at, std::function<void()> callback) {
        std::uint64_t id;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            id = ++next_id_;
            tasks_.emplace(id, Task{at, std::move(callback)});
        }
        wake_.notify_all();
        return id;
    }

    void cancel(std::uint64_t id) {
        std::lock_guard<std::mutex> lock(mutex_);
        tasks_.erase(id);
    }

    /// cancel(), and wait for the callback if it is running (never from a callback, nor
    /// holding a lock a callback takes).
    void cancel_and_wait(std::uint64_t id) {
        std::unique_lock<std::mutex> lock(mutex_);
        tasks_.erase(id);
        done_.wait(lock, [&] { return running_ != id; });
    }

private:
    struct Task {
        Clock::time_point at;
        std::function<void()> callback;
    };

    void loop() {
        std::unique_lock<std::mutex> lock(mutex_);
        while (!stop_) {
            auto next = tasks_.end();
            for (auto it = tasks_.begin(); it != tasks_.end(); ++it) {
                if (next == tasks_.end() || it->second.at < next->second.at) next = it;
            }
            if (next == tasks_.end()) {
                wake_.wait(lock);
            } else if (Clock::now() >= next->second.at) {
                auto callback = std::move(next->second.callback);
                running_ = next->first;
                tasks_.erase(next);
                lock.unlock();
                callback();
                callback = nullptr;
                lock.lock();
                running_ = 0;
                done_.notify_all();
            } else {
                const auto at = next->second.at;  // a copy: the entry may go while we wait
                wake_.wait_until(lock, at);
            }
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::map<std::uint64_t, Task> tasks_;
    std::uint64_t next_id_ = 0;
    std::uint64_t running_ = 0;
    bool stop_ = false;
    std::thread thread_;  // last: starts after the members it uses
};

/// The open turn: the attempt being answered and what was sent for it.
struct Turn {
    std::shared_ptr<const Prompt> prompt;  // the prompt of the current attempt
    Choice fallback;                       // computed before the bot could see the prompt
    int attempt = 0;
    int answered = -1;  // the last attempt answered
    bool closed = false;
    std::optional<Choice> last_sent;
    std::uint64_t timer = 0;
};

class Session : public std::enable_shared_from_this<Session> {
public:
    Session(Bot& bot, const Options& options)
        : bot_(bot), options_(options), name_(bot.name()), log_(make_log()), raised_(make_raised()) {}

    Outcome play();

private:
    Log make_log() const {
        if (options_.log) return options_.log;
        auto mutex = std::make_shared<std::mutex>();
        return [mutex, prefix = name_ + ": "](const std::string& line) {
            std::lock_guard<std::mutex> lock(*mutex);
            std::cerr << prefix << line << std::endl;
        };
    }

    Log make_raised() const {
        if (options_.raised) return options_.raised;
        return [](const std::string& line) { std::cerr << line << std::endl; };
    }

    std::shared_ptr<grpc::Channel> make_channel() const;
    std::optional<Outcome> play_once(pb::PlayService::Stub& stub, bool& welcomed,
                                     grpc::Status& status);
    Outcome finish(Stream& stream, grpc::ClientContext& context, const pb::Event& ended);

    // Called by the reader.
    void tell(const char* what, std::function<void()> call);
    bool on_event(const pb::Event& event);
    void on_prompt(const pb::TurnPrompt& raw, Clock::time_point at, WallClock::time_point wall);
    void on_result(const pb::ActionResult& result);

    // Called with mutex_ held.
    void ask_locked(const std::shared_ptr<Turn>& turn, const char* what,
                    std::function<Choice(const Prompt&)> call);
    void answer_locked(const std::shared_ptr<Turn>& turn, int attempt,
                       const std::optional<Choice>& choice, const char* what);
    bool open_locked(const std::shared_ptr<Turn>& turn, int attempt) const {
        return turn == current_ && !turn->closed && turn->attempt == attempt &&
               turn->answered < attempt;
    }
    void close_turn_locked();
    void write_locked(const pb::PlayRequest& request);

    void budget_ran_out(const std::shared_ptr<Turn>& turn, int attempt, const char* what);

    Bot& bot_;
    const Options options_;
    const std::string name_;
    const Log log_;
    const Log raised_;

    // Reader only.
    std::int64_t seat_ = -1;
    std::string match_id_;

    std::mutex mutex_;  // guards stream_ and current_
    Stream* stream_ = nullptr;
    std::shared_ptr<Turn> current_;

    Worker worker_;
    Timer timer_;  // last: destroyed (joined) first, while the members it uses live
};

std::shared_ptr<grpc::Channel> Session::make_channel() const {
    grpc::ChannelArguments args;
    // The channel's own reconnects as quick as ours (its default waits up to 2 minutes).
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 50);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    if (options_.tls) {
        grpc::SslCredentialsOptions ssl;
        ssl.pem_root_certs = options_.tls_ca_pem;  // empty: the system's trusted CAs
        ssl.pem_cert_chain = options_.tls_cert_pem;
        ssl.pem_private_key = options_.tls_key_pem;
        credentials = grpc::SslCredentials(ssl);
        if (!options_.tls_server_name.empty()) {
            args.SetSslTargetNameOverride(options_.tls_server_name);
        }
    } else {
        credentials = grpc::InsecureChannelCredentials();
    }
    return grpc::CreateCustomChannel(options_.address, credentials, args);
}

Outcome Session::play() {
    struct StopWorker {
        Worker& worker;
        ~StopWorker() { worker.stop(); }
    } stop_worker{worker_};
    auto channel = make_channel();
    auto stub = pb::PlayService::NewStub(channel);
    std::mt19937_64 rng(std::random_device{}());
    auto window_start = Clock::now();  // from the start, then from each loss of the seat
    int retries = 0;
    std::optional<Refused> last_refusal;
    std::string last_failure;
    for (;;) {
        bool welcomed = false;
        grpc::Status status;
        try {
            if (auto outcome = play_once(*stub, welcomed, status)) return *outcome;
            if (status.ok()) {
                last_failure = "the referee ended the stream before the match ended";
            } else if (is_retryable(status.error_code())) {
                last_failure = status_text(status);
            } else {
                throw RpcFailed(status);
            }
        } catch (const Refused& e) {
            // SEAT_TAKEN: the referee may not have noticed the old stream's end yet, or a
            // restarted bot meets its own ghost; SHUTTING_DOWN: a restarting referee may
            // take the seat back. Both are retried within the window.
            if (e.reason() != pb::REFUSAL_REASON_SEAT_TAKEN &&
                e.reason() != pb::REFUSAL_REASON_SHUTTING_DOWN) {
                throw;
            }
            last_refusal = e;
            last_failure = e.what();
        }
        if (welcomed) {
            log_("lost the stream (" + last_failure + "); reconnecting");
            window_start = Clock::now();
            retries = 0;
            last_refusal.reset();
        }
        const auto left = options_.reconnect_window - (Clock::now() - window_start);
        if (left <= Clock::duration::zero()) {
            if (last_refusal) throw *last_refusal;
            std::ostringstream text;
            text << "could not reach the referee at " << options_.address << " within "
                 << options_.reconnect_window.count() << " ms: " << last_failure;
            throw Unreachable(text.str());
        }
        if (retries > 0) {
            const auto delay = backoff_delay(retries, rng);
            log_(last_failure + "; retrying in " + std::to_string(delay.count()) + " ms");
            std::this_thread::sleep_for(std::min<Clock::duration>(left, delay));
        }
        ++retries;
        grpc::experimental::ChannelResetConnectionBackoff(channel.get());  // dial now
    }
}

std::optional<Outcome> Session::play_once(pb::PlayService::Stub& stub, bool& welcomed,
                                          grpc::Status& status) {
    grpc::ClientContext context;  // a fresh one for every stream
    std::unique_ptr<Stream> stream = stub.Play(&context);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stream_ = stream.get();
        write_locked(make_hello(options_.token, name_, bot_.want_legal_plays(), options_.batch_events));
    }
    auto detach = [&] {
        std::lock_guard<std::mutex> lock(mutex_);
        close_turn_locked();
        stream_ = nullptr;
    };
    pb::PlayResponse message;
    while (stream->Read(&message)) {
        const auto at = Clock::now();
        const auto wall = WallClock::now();
        switch (message.kind_case()) {
            case pb::PlayResponse::kWelcome: {
                auto welcome = std::make_shared<pb::Welcome>(message.welcome());
                seat_ = welcome->seat();
                match_id_ = welcome->match_id();
                welcomed = true;
                log_(std::string(welcome->reconnect() ? "back in seat " : "seated at seat ") +
                     std::to_string(seat_) + " of match " + match_id_);
                tell("on_welcome", [this, welcome] { bot_.on_welcome(*welcome); });
                break;
            }
            case pb::PlayResponse::kRefusal: {
                detach();
                context.TryCancel();
                stream->Finish();
                if (seat_ >= 0 && message.refusal().reason() == pb::REFUSAL_REASON_MATCH_OVER) {
                    log_("the match ended while the bot was away");
                    return Outcome{static_cast<std::uint32_t>(seat_), match_id_, std::nullopt};
                }
                throw Refused(message.refusal());
            }
            case pb::PlayResponse::kSnapshot: {
                auto snapshot = std::make_shared<pb::Snapshot>(message.snapshot());
                tell("on_snapshot", [this, snapshot] { bot_.on_snapshot(*snapshot); });
                break;
            }
            case pb::PlayResponse::kEvent:
                if (on_event(message.event())) return finish(*stream, context, message.event());
                break;
            case pb::PlayResponse::kBatch:
                for (const auto& event : message.batch().events()) {
                    if (on_event(event)) return finish(*stream, context, event);
                }
                break;
            case pb::PlayResponse::kPrompt:
                // Batched: the events that led to this turn reach the bot before choose.
                for (const auto& event : message.prompt().events()) on_event(event);
                on_prompt(message.prompt(), at, wall);
                break;
            case pb::PlayResponse::kResult:
                on_result(message.result());
                break;
            default:  // a kind newer than this library: nothing to do
                break;
        }
    }
    detach();
    status = stream->Finish();
    return std::nullopt;
}

Outcome Session::finish(Stream& stream, grpc::ClientContext& context, const pb::Event& ended) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        close_turn_locked();
        stream_ = nullptr;
    }
    stream.WritesDone();  // the match is over: our side is done
    if (!worker_.drain(kDrain)) {
        log_("the bot's last calls did not finish in " + std::to_string(kDrain.count()) + " ms");
    }
    // The referee ends the stream; if it does not, cancel it.
    const auto cancel = timer_.schedule(Clock::now() + kCloseWait, [&context] { context.TryCancel(); });
    pb::PlayResponse extra;
    while (stream.Read(&extra)) {
    }
    timer_.cancel_and_wait(cancel);
    stream.Finish();
    return Outcome{static_cast<std::uint32_t>(std::max<std::int64_t>(seat_, 0)), match_id_,
                   ended.match_ended()};
}

void Session::tell(const char* what, std::function<void()> call) {
    worker_.submit([self = shared_from_this(), what, call = std::move(call)] {
        try {
            call();
        } catch (const std::exception& e) {
            self->log_(std::string(what) + " threw: " + e.what());
        } catch (...) {
            self->log_(std::string(what) + " threw an exception");
        }
    });
}

bool Session::on_event(const pb::Event& event) {
    auto copy = std::make_shared<pb::Event>(event);
    tell("on_event", [this, copy] { bot_.on_event(*copy); });
    std::optional<std::uint64_t> turn_id;
    if (event.has_played()) turn_id = event.played().turn_id();
    if (event.has_passed()) turn_id = event.passed().turn_id();
    if (turn_id) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (current_ && current_->prompt->turn_id == *turn_id) close_turn_locked();  // acted
    }
    return event.has_match_ended();
}

void Session::on_prompt(const pb::TurnPrompt& raw, Clock::time_point at, WallClock::time_point wall) {
    const Budget budget = Budget::for_prompt(raw, at, wall, options_.safety_margin, bot_.use_time_bank());
    auto prompt = std::make_shared<const Prompt>(Prompt::from_proto(raw, budget));
    std::lock_guard<std::mutex> lock(mutex_);
    close_turn_locked();
    auto turn = std::make_shared<Turn>();
    turn->prompt = prompt;
    turn->fallback = fallback(*prompt);
    current_ = turn;
    ask_locked(turn, "choose", [this](const Prompt& p) { return bot_.choose(p); });
}

void Session::on_result(const pb::ActionResult& result) {
    const Rejection rejection = Rejection::from(result);
    if (!result.accepted()) {
        log_("turn " + std::to_string(result.turn_id()) + " rejected: " + rejection.to_string());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto turn = current_;
    if (!turn || turn->closed || result.turn_id() != turn->prompt->turn_id) return;  // stale
    if (result.accepted() || result.attempts_left() == 0) {
        close_turn_locked();
        return;
    }
    timer_.cancel(turn->timer);
    turn->attempt++;
    auto next = std::make_shared<Prompt>(*turn->prompt);
    next->attempts_left = result.attempts_left();
    turn->prompt = next;
    ask_locked(turn, "on_rejected",
               [this, rejection](const Prompt& p) { return bot_.on_rejected(p, rejection); });
}

void Session::ask_locked(const std::shared_ptr<Turn>& turn, const char* what,
                         std::function<Choice(const Prompt&)> call) {
    const int attempt = turn->attempt;
    const auto prompt = turn->prompt;
    turn->timer = timer_.schedule(prompt->budget.end(),
                                  [this, turn, attempt, what] { budget_ran_out(turn, attempt, what); });
    worker_.submit([self = shared_from_this(), turn, attempt, prompt, what, call = std::move(call)] {
        {
            std::lock_guard<std::mutex> lock(self->mutex_);
            if (!self->open_locked(turn, attempt) || prompt->budget.expired()) return;  // not wanted
        }
        std::optional<Choice> choice;
        std::optional<std::string> thrown;
        try {
            choice = call(*prompt);
        } catch (const std::exception& e) {
            self->log_(std::string(what) + " threw on turn " + std::to_string(prompt->turn_id) +
                       ": " + e.what() + "; sending the fallback");
            thrown = current_exception_text();
        } catch (...) {
            self->log_(std::string(what) + " threw on turn " + std::to_string(prompt->turn_id) +
                       "; sending the fallback");
            thrown = current_exception_text();
        }
        std::lock_guard<std::mutex> lock(self->mutex_);
        if (thrown && self->open_locked(turn, attempt)) {  // not a late one: its own raise
            self->raised_(raised_line(prompt->turn_id, what, *thrown));
        }
        self->answer_locked(turn, attempt, choice, what);
    });
}

void Session::budget_ran_out(const std::shared_ptr<Turn>& turn, int attempt, const char* what) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!open_locked(turn, attempt)) return;
    log_("turn " + std::to_string(turn->prompt->turn_id) + ": " + what +
         " is past its budget; sending the fallback");
    answer_locked(turn, attempt, std::nullopt, what);
}

void Session::answer_locked(const std::shared_ptr<Turn>& turn, int attempt,
                            const std::optional<Choice>& choice, const char* what) {
    const auto turn_id = turn->prompt->turn_id;
    if (!open_locked(turn, attempt)) {
        if (choice) {
            log_("turn " + std::to_string(turn_id) + ": " + what + " answered " +
                 to_string(*choice) + " too late; dropped");
        }
        return;
    }
    turn->answered = attempt;
    timer_.cancel(turn->timer);
    const Choice send = choice ? *choice : turn->fallback;
    if (attempt > 0 && turn->last_sent && send.same_as(*turn->last_sent)) {
        log_("turn " + std::to_string(turn_id) + ": " + to_string(send) +
             " was just rejected; not sent again (the referee acts at its deadline)");
        return;
    }
    turn->last_sent = send;
    write_locked(make_action(turn_id, send));
}

void Session::close_turn_locked() {
    if (current_ && !current_->closed) {
        current_->closed = true;
        timer_.cancel(current_->timer);
    }
}

void Session::write_locked(const pb::PlayRequest& request) {
    if (stream_ != nullptr && !stream_->Write(request)) {
        log_("could not send: the stream is closed");  // the reader sees how it ended
    }
}

}  // namespace

Outcome run(Bot& bot, const Options& options) {
    auto session = std::make_shared<Session>(bot, options);
    return session->play();
}

}  // namespace pusoy
