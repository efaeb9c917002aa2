// The stream loop against a scripted in-process referee on 127.0.0.1: hello, answers,
// rejections and the hook, the deadline, reconnects, refusals.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "pusoy/client.hpp"

namespace pusoy {
namespace {

using namespace std::chrono_literals;
using ServerStream = grpc::ServerReaderWriter<pb::PlayResponse, pb::PlayRequest>;
using Script = std::function<grpc::Status(int connection, ServerStream* stream)>;

/// A PlayService whose every stream runs `script` (given the stream's number, from 0).
class FakeReferee final : public pb::PlayService::Service {
public:
    explicit FakeReferee(Script script) : script_(std::move(script)) {
        grpc::ServerBuilder builder;
        builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
        builder.RegisterService(this);
        server_ = builder.BuildAndStart();
    }
    ~FakeReferee() override { server_->Shutdown(std::chrono::system_clock::now() + 1s); }

    grpc::Status Play(grpc::ServerContext*, ServerStream* stream) override {
        return script_(connections_++, stream);
    }

    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    int connections() const { return connections_; }

private:
    Script script_;
    int port_ = 0;
    std::atomic<int> connections_{0};
    std::unique_ptr<grpc::Server> server_;
};

// --- What the fake referee sends.

pb::PlayResponse welcome(std::uint32_t seat, bool reconnect = false) {
    pb::PlayResponse r;
    r.mutable_welcome()->set_seat(seat);
    r.mutable_welcome()->set_match_id("m-test");
    r.mutable_welcome()->set_protocol_version(1);
    r.mutable_welcome()->set_reconnect(reconnect);
    return r;
}

pb::PlayResponse snapshot() {
    pb::PlayResponse r;
    r.mutable_snapshot()->add_hand("3C");
    return r;
}

pb::PlayResponse prompt(std::uint64_t turn_id, std::uint32_t hand_number,
                        std::vector<std::vector<std::string>> plays, bool can_pass,
                        std::chrono::milliseconds time = 2000ms) {
    pb::PlayResponse r;
    auto* p = r.mutable_prompt();
    p->set_turn_id(turn_id);
    p->set_seat(1);
    const auto deadline = std::chrono::system_clock::now() + time;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline.time_since_epoch()).count();
    p->mutable_deadline()->set_seconds(ms / 1000);
    p->mutable_deadline()->set_nanos(static_cast<int>(ms % 1000) * 1'000'000);
    p->set_turn_time_ms(static_cast<std::uint32_t>(time.count()));
    for (const char* card : {"3C", "4D", "2S"}) p->add_hand(card);
    for (const auto& cards : plays) {
        auto* play = p->add_legal_plays();
        for (const auto& c : cards) play->add_cards(c);
        play->set_combination(pb::COMBINATION_SINGLE);
    }
    p->set_can_pass(can_pass);
    p->set_is_lead(!can_pass);
    p->set_attempts_left(3);
    p->mutable_state()->set_hand_number(hand_number);
    return r;
}

pb::PlayResponse result(std::uint64_t turn_id, bool accepted, std::uint32_t attempts_left = 0,
                        pb::RejectionReason reason = pb::REJECTION_REASON_UNSPECIFIED) {
    pb::PlayResponse r;
    r.mutable_result()->set_turn_id(turn_id);
    r.mutable_result()->set_accepted(accepted);
    r.mutable_result()->set_attempts_left(attempts_left);
    r.mutable_result()->set_reason(reason);
    return r;
}

pb::PlayResponse match_ended(std::uint32_t seat, std::uint32_t place) {
    pb::PlayResponse r;
    auto* ended = r.mutable_event()->mutable_match_ended();
    ended->set_status(pb::MATCH_STATUS_FINISHED);
    auto* standing = ended->add_standings();
    standing->set_place(place);
    standing->add_seats(seat);
    return r;
}

pb::PlayResponse refusal(pb::RefusalReason reason) {
    pb::PlayResponse r;
    r.mutable_refusal()->set_reason(reason);
    r.mutable_refusal()->set_message("scripted");
    return r;
}

/// Reads the next request; an empty one if the stream ended.
pb::PlayRequest next(ServerStream* stream) {
    pb::PlayRequest request;
    if (!stream->Read(&request)) request.Clear();
    return request;
}

std::vector<std::string> cards_of(const pb::PlayRequest& request) {
    const auto& cards = request.action().play().cards();
    return {cards.begin(), cards.end()};
}

// --- The bot under test.

class TestBot : public Bot {
public:
    std::string name() const override { return "test-bot"; }
    Choice choose(const Prompt& turn) override {
        ++chosen;
        threads.push_back(std::this_thread::get_id());
        if (sleep.count()) std::this_thread::sleep_for(sleep);
        if (sleep_first) {
            std::this_thread::sleep_for(*sleep_first);
            sleep_first.reset();
        }
        if (throws) throw std::runtime_error("boom");
        return turn.legal_plays.back().choice();  // not what the fallback would pick
    }
    Choice on_rejected(const Prompt& turn, const Rejection& r) override {
        ++rejections;
        last_reason = r.reason;
        if (rejected_answer) return *rejected_answer;
        return Bot::on_rejected(turn, r);
    }
    void on_welcome(const pb::Welcome&) override {
        ++welcomes;
        threads.push_back(std::this_thread::get_id());
    }
    void on_snapshot(const pb::Snapshot&) override {
        ++snapshots;
        threads.push_back(std::this_thread::get_id());
    }
    void on_event(const pb::Event&) override {
        ++events;
        threads.push_back(std::this_thread::get_id());
    }

    std::vector<std::thread::id> threads;  // where each method was called
    std::chrono::milliseconds sleep{0};
    std::optional<std::chrono::milliseconds> sleep_first;
    bool throws = false;
    std::optional<Choice> rejected_answer;
    int chosen = 0, rejections = 0, welcomes = 0, snapshots = 0, events = 0;
    pb::RejectionReason last_reason = pb::REJECTION_REASON_UNSPECIFIED;
};

struct Logs {
    std::mutex mutex;
    std::vector<std::string> lines;
    bool contains(const std::string& text) {
        std::lock_guard<std::mutex> lock(mutex);
        for (const auto& line : lines) {
            if (line.find(text) != std::string::npos) return true;
        }
        return false;
    }
};

Options options_for(const FakeReferee& referee, Logs& logs) {
    Options options;
    options.address = referee.address();
    options.token = "tok";
    options.reconnect_window = 3000ms;
    options.log = [&logs](const std::string& line) {
        std::lock_guard<std::mutex> lock(logs.mutex);
        logs.lines.push_back(line);
    };
    return options;
}

TEST(Runner, SaysHelloAnswersAPromptAndEndsWithTheMatch) {
    std::mutex mutex;
    pb::PlayRequest hello, action;
    FakeReferee referee([&](int, ServerStream* stream) {
        pb::PlayRequest h = next(stream);
        stream->Write(welcome(1));
        stream->Write(snapshot());
        stream->Write(prompt(7, 1, {{"3C"}, {"2S"}}, false));
        pb::PlayRequest a = next(stream);
        {
            std::lock_guard<std::mutex> lock(mutex);
            hello = h;
            action = a;
        }
        stream->Write(result(7, true));
        stream->Write(match_ended(1, 2));
        return grpc::Status::OK;
    });
    Logs logs;
    TestBot bot;
    const Outcome outcome = run(bot, options_for(referee, logs));

    EXPECT_EQ(outcome.seat, 1u);
    EXPECT_EQ(outcome.match_id, "m-test");
    ASSERT_TRUE(outcome.ended.has_value());
    EXPECT_EQ(outcome.place(), 2u);
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(hello.hello().token(), "tok");
    EXPECT_EQ(hello.hello().protocol_version(), 1u);
    EXPECT_TRUE(hello.hello().want_legal_plays());
    EXPECT_EQ(hello.hello().bot_name(), "test-bot");
    EXPECT_EQ(action.action().turn_id(), 7u);
    EXPECT_EQ(cards_of(action), std::vector<std::string>{"2S"});
    EXPECT_EQ(bot.welcomes, 1);
    EXPECT_EQ(bot.snapshots, 1);
    EXPECT_EQ(bot.events, 1);
    EXPECT_EQ(bot.chosen, 1);
    EXPECT_EQ(referee.connections(), 1);
    // Every method ran on one worker thread, not the reader's (the caller of run()).
    ASSERT_EQ(bot.threads.size(), 4u);
    for (const auto& id : bot.threads) {
        EXPECT_EQ(id, bot.threads.front());
        EXPECT_NE(id, std::this_thread::get_id());
    }
}

TEST(Runner, ADropWhileChooseIsThinkingReconnectsAtOnceAndDropsTheStaleAnswer) {
    std::mutex mutex;
    std::chrono::steady_clock::time_point dropped, back;
    pb::PlayRequest action;
    FakeReferee referee([&](int connection, ServerStream* stream) {
        next(stream);
        if (connection == 0) {
            stream->Write(welcome(1));
            stream->Write(prompt(1, 1, {{"3C"}, {"4D"}}, false, 5000ms));
            std::this_thread::sleep_for(200ms);  // choose() is thinking now
            std::lock_guard<std::mutex> lock(mutex);
            dropped = std::chrono::steady_clock::now();
            return grpc::Status::OK;  // like the drill: the stream ends after the prompt
        }
        {
            std::lock_guard<std::mutex> lock(mutex);
            back = std::chrono::steady_clock::now();
        }
        stream->Write(welcome(1, true));
        stream->Write(prompt(2, 1, {{"3C"}, {"4D"}}, false, 5000ms));
        pb::PlayRequest a = next(stream);  // the late answer to turn 1 must not come here
        {
            std::lock_guard<std::mutex> lock(mutex);
            action = a;
        }
        stream->Write(result(2, true));
        stream->Write(match_ended(1, 1));
        return grpc::Status::OK;
    });
    Logs logs;
    TestBot bot;
    bot.sleep_first = 1500ms;
    run(bot, options_for(referee, logs));
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_LT(back - dropped, 500ms);  // not after choose() returned
    EXPECT_EQ(action.action().turn_id(), 2u);
    EXPECT_EQ(cards_of(action), std::vector<std::string>{"4D"});
    EXPECT_EQ(bot.chosen, 2);
    EXPECT_TRUE(logs.contains("too late"));
}

TEST(Runner, MisbehavesOncePerHandAndRecoversWithTheFallback) {
    std::mutex mutex;
    std::vector<pb::PlayRequest> actions;
    FakeReferee referee([&](int, ServerStream* stream) {
        auto record = [&](const pb::PlayRequest& r) {
            std::lock_guard<std::mutex> lock(mutex);
            actions.push_back(r);
        };
        next(stream);
        stream->Write(welcome(1));
        stream->Write(prompt(3, 1, {{"3C"}, {"4D"}}, false));
        record(next(stream));  // the bad card
        stream->Write(result(3, false, 2, pb::REJECTION_REASON_CARD_NOT_IN_HAND));
        record(next(stream));  // the fallback
        stream->Write(result(3, true));
        stream->Write(prompt(5, 1, {{"3C"}, {"4D"}}, false));
        record(next(stream));  // same hand: the bot's own choice
        stream->Write(result(5, true));
        stream->Write(prompt(9, 2, {{"3C"}, {"4D"}}, false));
        record(next(stream));  // a new hand: a bad card again
        stream->Write(result(9, false, 0, pb::REJECTION_REASON_CARD_NOT_IN_HAND));
        stream->Write(match_ended(1, 1));
        return grpc::Status::OK;
    });
    Logs logs;
    TestBot bot;
    MisbehavingBot misbehaving(bot);  // what run_main does with --misbehave
    run(misbehaving, options_for(referee, logs));

    std::lock_guard<std::mutex> lock(mutex);
    ASSERT_EQ(actions.size(), 4u);
    EXPECT_EQ(cards_of(actions[0]), std::vector<std::string>{"3S"});  // not in {3C 4D 2S}
    EXPECT_EQ(cards_of(actions[1]), std::vector<std::string>{"3C"});  // fallback: weakest
    EXPECT_EQ(actions[1].action().turn_id(), 3u);
    EXPECT_EQ(cards_of(actions[2]), std::vector<std::string>{"4D"});  // choose()
    EXPECT_EQ(cards_of(actions[3]), std::vector<std::string>{"3S"});
    EXPECT_EQ(bot.rejections, 1);  // none when no attempts are left
    EXPECT_EQ(bot.last_reason, pb::REJECTION_REASON_CARD_NOT_IN_HAND);
    EXPECT_EQ(bot.chosen, 1);
}

TEST(Runner, AnOverriddenRejectionHookChoosesTheRetry) {
    std::mutex mutex;
    pb::PlayRequest retry;
    FakeReferee referee([&](int, ServerStream* stream) {
        next(stream);
        stream->Write(welcome(1));
        stream->Write(prompt(4, 1, {{"3C"}, {"4D"}}, true));
        next(stream);
        stream->Write(result(4, false, 1, pb::REJECTION_REASON_DOES_NOT_BEAT));
        pb::PlayRequest r = next(stream);
        {
            std::lock_guard<std::mutex> lock(mutex);
            retry = r;
        }
        stream->Write(result(4, true));
        stream->Write(match_ended(1, 1));
        return grpc::Status::OK;
    });
    Logs logs;
    TestBot bot;
    bot.rejected_answer = Choice::play({"2S"});
    run(bot, options_for(referee, logs));
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(retry.action().turn_id(), 4u);
    EXPECT_EQ(cards_of(retry), std::vector<std::string>{"2S"});
    EXPECT_EQ(bot.last_reason, pb::REJECTION_REASON_DOES_NOT_BEAT);
}

TEST(Runner, ASlowChooseIsReplacedByTheFallbackBeforeTheDeadline) {
    std::mutex mutex;
    pb::PlayRequest action;
    std::chrono::milliseconds waited{0};
    FakeReferee referee([&](int, ServerStream* stream) {
        next(stream);
        stream->Write(welcome(1));
        const auto sent = std::chrono::steady_clock::now();
        stream->Write(prompt(8, 1, {{"3C"}, {"4D"}}, true, 400ms));
        pb::PlayRequest a = next(stream);
        {
            std::lock_guard<std::mutex> lock(mutex);
            action = a;
            waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - sent);
        }
        stream->Write(result(8, true));
        stream->Write(match_ended(1, 1));
        return grpc::Status::OK;
    });
    Logs logs;
    TestBot bot;
    bot.sleep = 1200ms;
    run(bot, options_for(referee, logs));
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(action.action().turn_id(), 8u);
    EXPECT_EQ(action.action().kind_case(), pb::Action::kPass);  // the fallback
    EXPECT_LT(waited.count(), 400);
    EXPECT_GT(waited.count(), 200);
    EXPECT_TRUE(logs.contains("too late"));
}

TEST(Runner, AThrowingChooseSendsTheFallback) {
    std::mutex mutex;
    pb::PlayRequest action;
    FakeReferee referee([&](int, ServerStream* stream) {
        next(stream);
        stream->Write(welcome(1));
        stream->Write(prompt(2, 1, {{"3C"}, {"4D"}}, false));
        pb::PlayRequest a = next(stream);
        {
            std::lock_guard<std::mutex> lock(mutex);
            action = a;
        }
        stream->Write(result(2, true));
        stream->Write(match_ended(1, 1));
        return grpc::Status::OK;
    });
    Logs logs;
    TestBot bot;
    bot.throws = true;
    Logs marked;
    Options options = options_for(referee, logs);
    options.raised = [&marked](const std::string& line) {
        std::lock_guard<std::mutex> lock(marked.mutex);
        marked.lines.push_back(line);
    };
    run(bot, options);
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(cards_of(action), std::vector<std::string>{"3C"});
    EXPECT_TRUE(logs.contains("boom"));
    std::lock_guard<std::mutex> marks(marked.mutex);
    EXPECT_EQ(marked.lines,
              std::vector<std::string>{"PUSOY_BOT_RAISED turn=2 call=choose error=std::runtime_error: boom"});
}

TEST(Raised, TheMarkerIsOneBoundedLine) {
    const std::string line =
        raised_line(1, "choose", "x\ny\r\tz\xE2\x80\xA8" + std::string(500, 'w'));
    EXPECT_EQ(line.find_first_of("\n\r\t"), std::string::npos) << line;
    EXPECT_EQ(line.find("\xE2\x80\xA8"), std::string::npos) << line;
    EXPECT_EQ(line.rfind("PUSOY_BOT_RAISED turn=1 call=choose error=x y  z ", 0), 0u) << line;
    EXPECT_EQ(line.substr(line.find(" error=") + 7).size(), kRaisedMaxChars);
    EXPECT_EQ(raised_line(3, "on_rejected", "int"), "PUSOY_BOT_RAISED turn=3 call=on_rejected error=int");
}

TEST(Raised, NamesWhatIsThrown) {
    try {
        throw std::out_of_range("past the end");
    } catch (...) {
        EXPECT_EQ(current_exception_text(), "std::out_of_range: past the end");
    }
    try {
        throw 42;
    } catch (...) {
        EXPECT_EQ(current_exception_text(), "int");
    }
}

class Drop : public ::testing::TestWithParam<grpc::StatusCode> {};

TEST_P(Drop, ReconnectsWithTheSameTokenAndANewStream) {
    std::mutex mutex;
    std::vector<std::string> tokens;
    FakeReferee referee([&](int connection, ServerStream* stream) {
        pb::PlayRequest hello = next(stream);
        {
            std::lock_guard<std::mutex> lock(mutex);
            tokens.push_back(hello.hello().token());
        }
        if (connection == 0) {
            stream->Write(welcome(2));
            stream->Write(prompt(1, 1, {{"3C"}}, false));
            return grpc::Status(GetParam(), "scripted drop");  // like the drill
        }
        stream->Write(welcome(2, true));
        stream->Write(snapshot());
        stream->Write(match_ended(2, 3));
        return grpc::Status::OK;
    });
    Logs logs;
    TestBot bot;
    const auto outcome = run(bot, options_for(referee, logs));
    EXPECT_EQ(outcome.place(), 3u);
    EXPECT_EQ(referee.connections(), 2);
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(tokens, (std::vector<std::string>{"tok", "tok"}));
    EXPECT_EQ(bot.welcomes, 2);
    EXPECT_TRUE(logs.contains("back in seat"));
}

INSTANTIATE_TEST_SUITE_P(Runner, Drop,
                         ::testing::Values(grpc::StatusCode::OK, grpc::StatusCode::UNAVAILABLE,
                                           grpc::StatusCode::INTERNAL,
                                           grpc::StatusCode::UNKNOWN),
                         [](const auto& param_info) {
                             switch (param_info.param) {
                                 case grpc::StatusCode::OK: return std::string("CleanEnd");
                                 case grpc::StatusCode::UNAVAILABLE: return std::string("Unavailable");
                                 case grpc::StatusCode::INTERNAL: return std::string("Internal");
                                 default: return std::string("Unknown");
                             }
                         });

TEST(Runner, ASeatStillTakenAfterADropIsRetried) {
    FakeReferee referee([&](int connection, ServerStream* stream) {
        next(stream);
        if (connection == 0) {
            stream->Write(welcome(0));
            return grpc::Status::OK;
        }
        if (connection == 1) {
            stream->Write(refusal(pb::REFUSAL_REASON_SEAT_TAKEN));
            return grpc::Status::OK;
        }
        stream->Write(welcome(0, true));
        stream->Write(match_ended(0, 1));
        return grpc::Status::OK;
    });
    Logs logs;
    TestBot bot;
    const auto outcome = run(bot, options_for(referee, logs));
    EXPECT_EQ(outcome.place(), 1u);
    EXPECT_EQ(referee.connections(), 3);
}

TEST(Runner, MatchOverAfterBeingSeatedEndsCleanly) {
    FakeReferee referee([&](int connection, ServerStream* stream) {
        next(stream);
        if (connection == 0) {
            stream->Write(welcome(3));
            return grpc::Status(grpc::StatusCode::UNAVAILABLE, "gone");
        }
        stream->Write(refusal(pb::REFUSAL_REASON_MATCH_OVER));
        return grpc::Status::OK;
    });
    Logs logs;
    TestBot bot;
    const auto outcome = run(bot, options_for(referee, logs));
    EXPECT_EQ(outcome.seat, 3u);
    EXPECT_FALSE(outcome.ended.has_value());
    EXPECT_EQ(outcome.place(), 0u);
}

class Refusal : public ::testing::TestWithParam<pb::RefusalReason> {};

TEST_P(Refusal, OnTheFirstHelloIsFinal) {
    FakeReferee referee([&](int, ServerStream* stream) {
        next(stream);
        stream->Write(refusal(GetParam()));
        return grpc::Status::OK;
    });
    Logs logs;
    TestBot bot;
    try {
        run(bot, options_for(referee, logs));
        FAIL() << "no Refused";
    } catch (const Refused& e) {
        EXPECT_EQ(e.reason(), GetParam());
    }
    EXPECT_EQ(referee.connections(), 1);
}

INSTANTIATE_TEST_SUITE_P(Runner, Refusal,
                         ::testing::Values(pb::REFUSAL_REASON_BAD_TOKEN,
                                           pb::REFUSAL_REASON_VERSION_NOT_SUPPORTED,
                                           pb::REFUSAL_REASON_HELLO_EXPECTED,
                                           pb::REFUSAL_REASON_MATCH_OVER),
                         [](const auto& param_info) { return refusal_name(param_info.param); });

TEST(Runner, AStatusThatNoReconnectFixesFails) {
    FakeReferee referee([&](int, ServerStream*) {
        return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "no");
    });
    Logs logs;
    TestBot bot;
    try {
        run(bot, options_for(referee, logs));
        FAIL() << "no RpcFailed";
    } catch (const RpcFailed& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::PERMISSION_DENIED);
    }
}

TEST(Runner, GivesUpWhenTheRefereeCannotBeReached) {
    Logs logs;
    TestBot bot;
    Options options;
    options.address = "127.0.0.1:1";  // nothing listens there
    options.token = "tok";
    options.reconnect_window = 500ms;
    options.log = [&logs](const std::string& line) {
        std::lock_guard<std::mutex> lock(logs.mutex);
        logs.lines.push_back(line);
    };
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(run(bot, options), Unreachable);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
    EXPECT_TRUE(logs.contains("retrying"));
}

TEST(Backoff, JitteredWithinHalfToTheWholeOfADoublingDelayFrom50msTo1s) {
    std::mt19937_64 rng(7);
    const long long tops[] = {50, 100, 200, 400, 800, 1000, 1000, 1000};
    for (int n = 1; n <= 8; ++n) {
        for (int k = 0; k < 50; ++k) {
            const auto d = backoff_delay(n, rng).count();
            EXPECT_GE(d, tops[n - 1] / 2) << "retry " << n;
            EXPECT_LE(d, tops[n - 1]) << "retry " << n;
        }
    }
}

TEST(Runner, SeatTakenBeforeTheFirstWelcomeIsRetriedUntilTheWindowEnds) {
    FakeReferee referee([&](int, ServerStream* stream) {
        next(stream);
        stream->Write(refusal(pb::REFUSAL_REASON_SEAT_TAKEN));
        return grpc::Status::OK;
    });
    Logs logs;
    TestBot bot;
    Options options = options_for(referee, logs);
    options.reconnect_window = 600ms;
    try {
        run(bot, options);
        FAIL() << "no Refused";
    } catch (const Refused& e) {
        EXPECT_EQ(e.reason(), pb::REFUSAL_REASON_SEAT_TAKEN);
    }
    EXPECT_GT(referee.connections(), 2);
}

// docs/kits.md, section 3: a choose that ignores its budget and blocks gets the fallback
// on time; its late answer is never sent; the prompt behind it gets its own answer.
TEST(Runner, ASynchronousChooseThatOverrunsNeverRacesTheNextPrompt) {
    std::mutex mutex;
    std::vector<pb::PlayRequest> actions;
    std::vector<long long> after_ms;
    FakeReferee referee([&](int, ServerStream* stream) {
        next(stream);
        stream->Write(welcome(1));
        auto sent = std::chrono::steady_clock::now();
        stream->Write(prompt(1, 1, {{"3C"}, {"4D"}}, false, 300ms));
        auto record = [&](pb::PlayRequest r) {
            std::lock_guard<std::mutex> lock(mutex);
            actions.push_back(std::move(r));
            after_ms.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - sent).count());
        };
        record(next(stream));  // the fallback for turn 1, on time
        sent = std::chrono::steady_clock::now();
        stream->Write(prompt(2, 1, {{"3C"}, {"4D"}}, false, 3000ms));
        record(next(stream));  // turn 2's own answer, after choose(1) gave up the worker
        stream->Write(match_ended(1, 1));
        return grpc::Status::OK;
    });
    Logs logs;
    TestBot bot;
    bot.sleep_first = 1200ms;
    run(bot, options_for(referee, logs));
    std::lock_guard<std::mutex> lock(mutex);
    ASSERT_EQ(actions.size(), 2u);
    EXPECT_EQ(actions[0].action().turn_id(), 1u);
    EXPECT_EQ(cards_of(actions[0]), std::vector<std::string>{"3C"});  // the fallback
    EXPECT_LT(after_ms[0], 300);
    EXPECT_EQ(actions[1].action().turn_id(), 2u);
    EXPECT_EQ(cards_of(actions[1]), std::vector<std::string>{"4D"});  // choose's own
    EXPECT_EQ(bot.chosen, 2);
    EXPECT_TRUE(logs.contains("too late"));
}

TEST(Backoff, RetryableStatuses) {
    EXPECT_TRUE(is_retryable(grpc::StatusCode::UNAVAILABLE));
    EXPECT_TRUE(is_retryable(grpc::StatusCode::CANCELLED));
    EXPECT_TRUE(is_retryable(grpc::StatusCode::INTERNAL));
    EXPECT_TRUE(is_retryable(grpc::StatusCode::UNKNOWN));
    EXPECT_TRUE(is_retryable(grpc::StatusCode::OK));
    EXPECT_TRUE(is_retryable(grpc::StatusCode::DEADLINE_EXCEEDED));
    EXPECT_FALSE(is_retryable(grpc::StatusCode::UNIMPLEMENTED));
    EXPECT_FALSE(is_retryable(grpc::StatusCode::PERMISSION_DENIED));
}

}  // namespace
}  // namespace pusoy
