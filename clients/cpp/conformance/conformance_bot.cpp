// The C++ kit's conformance bot: a bot whose behaviour the transcript scripts
// (PUSOY_CONFORMANCE_BOT, JSON; clients/conformance/README.md), run through the kit's own
// run_main, so flags, variables, TLS and exit codes are the real ones.
//
// `choose` and `on_rejected` map turn ids to steps ({"play": [...]}, {"pass": true},
// {"block_ms": N} blocks the worker first, {"until_remaining_ms": N} waits until the
// budget has N ms left, {"throw": "why"}); `throw_in` names hooks that throw;
// `want_legal_plays` and `batch_events` are passed on. Checks, each ending the bot at once
// with exit code 70 when it fails: `tracker` (the kit's Tracker, fed by the hooks, must hold
// each prompt's state and hand when choose is called), `events_before` (turn id to the
// number of on_event calls before that turn's choose), `events_total` (on_event calls in the
// whole run, checked when run_main returns 0).
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "pusoy/client.hpp"

namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr int kExitCheckFailed = 70;

[[noreturn]] void check_failed(const std::string& why) {
    std::cerr << "cpp-conformance: check failed: " << why << std::endl;
    std::_Exit(kExitCheckFailed);
}

const Value* field(const Struct& s, const std::string& key) {
    const auto it = s.fields().find(key);
    return it == s.fields().end() ? nullptr : &it->second;
}

bool flag(const Struct& s, const std::string& key, bool unset) {
    const Value* v = field(s, key);
    return v == nullptr ? unset : v->bool_value();
}

template <typename A, typename B>
std::string list(const A& values, const B& show) {
    std::ostringstream out;
    out << '[';
    bool first = true;
    for (const auto& v : values) {
        out << (first ? "" : " ") << show(v);
        first = false;
    }
    out << ']';
    return out.str();
}

std::string text(const std::string& s) { return s; }
template <typename N>
std::string number(N n) { return std::to_string(n); }

class ConformanceBot final : public pusoy::Bot {
public:
    explicit ConformanceBot(Struct script) : script_(std::move(script)), track_(flag(script_, "tracker", false)) {}

    std::string name() const override { return "cpp-conformance"; }
    bool want_legal_plays() const override { return flag(script_, "want_legal_plays", true); }

    pusoy::Choice choose(const pusoy::Prompt& prompt) override {
        if (const Value* before = step_value("events_before", prompt.turn_id)) {
            const auto want = static_cast<long long>(before->number_value());
            if (want != events_.load()) {
                check_failed("turn " + std::to_string(prompt.turn_id) + ": " +
                             std::to_string(events_.load()) + " events before choose, not " +
                             std::to_string(want));
            }
        }
        if (track_) {
            const std::string why = differs(prompt.raw);
            if (!why.empty()) check_failed(why);
        }
        if (const Value* step = step_value("choose", prompt.turn_id)) return run(step->struct_value(), prompt);
        if (prompt.legal_plays.empty()) return pusoy::Choice::pass();
        return prompt.legal_plays.front().choice();
    }

    pusoy::Choice on_rejected(const pusoy::Prompt& prompt, const pusoy::Rejection& rejection) override {
        throw_in("on_rejected");
        if (const Value* step = step_value("on_rejected", prompt.turn_id)) return run(step->struct_value(), prompt);
        return Bot::on_rejected(prompt, rejection);
    }

    void on_welcome(const pusoy::pb::Welcome& welcome) override {
        if (track_) tracker_.on_welcome(welcome);
        throw_in("on_welcome");
    }
    void on_snapshot(const pusoy::pb::Snapshot& snapshot) override {
        if (track_) tracker_.on_snapshot(snapshot);
        throw_in("on_snapshot");
    }
    void on_event(const pusoy::pb::Event& event) override {
        ++events_;
        if (track_) tracker_.on_event(event);
        throw_in("on_event");
    }

    long long events() const { return events_.load(); }

private:
    const Value* step_value(const std::string& table, std::uint64_t turn_id) const {
        const Value* steps = field(script_, table);
        if (steps == nullptr || !steps->has_struct_value()) return nullptr;
        return field(steps->struct_value(), std::to_string(turn_id));
    }

    static pusoy::Choice run(const Struct& step, const pusoy::Prompt& prompt) {
        if (const Value* ms = field(step, "block_ms")) {
            // A sleep that ignores the budget, as a synchronous search would.
            std::this_thread::sleep_for(std::chrono::milliseconds{static_cast<long long>(ms->number_value())});
        }
        if (const Value* ms = field(step, "until_remaining_ms")) {
            const std::chrono::milliseconds left{static_cast<long long>(ms->number_value())};
            while (prompt.budget.remaining() > left) std::this_thread::sleep_for(std::chrono::milliseconds{5});
        }
        if (const Value* why = field(step, "throw")) throw std::runtime_error(why->string_value());
        if (flag(step, "pass", false)) return pusoy::Choice::pass();
        std::vector<std::string> cards;
        if (const Value* play = field(step, "play")) {
            for (const auto& card : play->list_value().values()) cards.push_back(card.string_value());
        }
        return pusoy::Choice::play(cards);
    }

    void throw_in(const std::string& hook) const {
        if (const Value* hooks = field(script_, "throw_in")) {
            for (const auto& v : hooks->list_value().values()) {
                if (v.string_value() == hook) throw std::runtime_error("scripted failure in " + hook);
            }
        }
    }

    /// What the tracker holds that differs from the referee's state in the prompt, or "".
    std::string differs(const pusoy::pb::TurnPrompt& p) const {
        const auto& st = p.state();
        const pusoy::Tracker& t = tracker_;
        auto four = [](const auto& repeated) {
            std::vector<long long> out(4, 0);
            for (int i = 0; i < std::min(4, repeated.size()); ++i) out[static_cast<std::size_t>(i)] = repeated.Get(i);
            return out;
        };
        auto vec = [](const auto& a) { return std::vector<long long>(a.begin(), a.end()); };
        auto strings = [](const auto& repeated) { return std::vector<std::string>(repeated.begin(), repeated.end()); };
        std::vector<pusoy::Tracker::TrickEntry> trick;
        for (const auto& x : st.trick()) {
            pusoy::Tracker::TrickEntry e{x.seat(), {}};
            if (!x.pass()) e.cards = strings(x.play().cards());
            trick.push_back(e);
        }
        auto show_trick = [](const std::vector<pusoy::Tracker::TrickEntry>& tr) {
            return list(tr, [](const pusoy::Tracker::TrickEntry& e) {
                return std::to_string(e.seat) + ":" + (e.is_pass() ? std::string("pass") : list(e.cards, text));
            });
        };
        const std::string turn = "turn " + std::to_string(p.turn_id()) + ": tracker ";
        auto ints = [](const std::vector<long long>& v) { return list(v, number<long long>); };
        if (t.hand_number() != st.hand_number()) {
            return turn + "hand_number " + std::to_string(t.hand_number()) + ", the referee's " + std::to_string(st.hand_number());
        }
        if (t.hand() != strings(p.hand())) return turn + "hand " + list(t.hand(), text) + ", the referee's " + list(strings(p.hand()), text);
        if (vec(t.card_counts()) != four(st.card_counts())) {
            return turn + "card_counts " + ints(vec(t.card_counts())) + ", the referee's " + ints(four(st.card_counts()));
        }
        if (t.played_cards() != strings(st.played_cards())) {
            return turn + "played_cards " + list(t.played_cards(), text) + ", the referee's " + list(strings(st.played_cards()), text);
        }
        if (t.table() != strings(st.table().cards())) {
            return turn + "table " + list(t.table(), text) + ", the referee's " + list(strings(st.table().cards()), text);
        }
        const auto seat = t.table_seat();
        if (seat.has_value() != st.has_table_seat() || (seat && *seat != st.table_seat())) {
            return turn + "table_seat differs";
        }
        if (vec(t.locked_out()) != four(st.locked_out())) {
            return turn + "locked_out " + ints(vec(t.locked_out())) + ", the referee's " + ints(four(st.locked_out()));
        }
        if (t.revolution() != st.revolution()) return turn + "revolution differs";
        if (!(t.trick() == trick)) return turn + "trick " + show_trick(t.trick()) + ", the referee's " + show_trick(trick);
        if (vec(t.totals()) != four(st.totals())) {
            return turn + "totals " + ints(vec(t.totals())) + ", the referee's " + ints(four(st.totals()));
        }
        if (vec(t.hands_won()) != four(st.hands_won())) {
            return turn + "hands_won " + ints(vec(t.hands_won())) + ", the referee's " + ints(four(st.hands_won()));
        }
        return "";
    }

    const Struct script_;
    const bool track_;
    pusoy::Tracker tracker_;  // used on the bot's worker only
    std::atomic<long long> events_{0};
};

}  // namespace

int main(int argc, char** argv) {
    Struct script;
    const char* json = std::getenv("PUSOY_CONFORMANCE_BOT");
    const auto parsed = google::protobuf::util::JsonStringToMessage(json ? json : "{}", &script);
    if (!parsed.ok()) {
        std::cerr << "cpp-conformance: PUSOY_CONFORMANCE_BOT: " << parsed.ToString() << std::endl;
        return pusoy::kExitUsage;
    }
    if (flag(script, "batch_events", false)) setenv("PUSOY_BATCH_EVENTS", "1", 1);
    ConformanceBot bot(script);
    const int code = pusoy::run_main(bot, argc, argv);
    if (const Value* total = field(script, "events_total")) {
        const auto want = static_cast<long long>(total->number_value());
        if (code == 0 && want != bot.events()) {
            check_failed(std::to_string(bot.events()) + " events in the run, not " + std::to_string(want));
        }
    }
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(code);  // a worker still blocked in a scripted sleep must not delay the exit
}
