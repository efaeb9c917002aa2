#include "pusoy/prompt.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace pusoy {
namespace {

constexpr const char* kRanks = "3456789TJQKA2";
constexpr const char* kSuits = "CSHD";

std::string upper(std::string text) {
    for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return text;
}

PlayOption option_from(const pb::Play& play) {
    PlayOption option;
    option.cards.assign(play.cards().begin(), play.cards().end());
    option.combination = play.combination();
    return option;
}

std::string strip_prefix(std::string name, const std::string& prefix, int value) {
    if (name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
    return name.empty() ? std::to_string(value) : name;
}

}  // namespace

bool Choice::same_as(const Choice& other) const {
    std::vector<std::string> a, b;
    for (const auto& c : cards) a.push_back(upper(c));
    for (const auto& c : other.cards) b.push_back(upper(c));
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
}

Budget Budget::for_prompt(const pb::TurnPrompt& prompt, Clock::time_point receipt,
                          WallClock::time_point wall, std::chrono::milliseconds margin,
                          bool use_time_bank) {
    using std::chrono::milliseconds;
    const milliseconds turn_time{prompt.turn_time_ms()};
    milliseconds span = turn_time;
    if (prompt.has_deadline()) {
        const auto& ts = prompt.deadline();
        const auto deadline = WallClock::time_point{std::chrono::duration_cast<WallClock::duration>(
            std::chrono::seconds{ts.seconds()} + std::chrono::nanoseconds{ts.nanos()})};
        // A clock ahead of the referee's gives a negative duration: 0, and the turn time
        // decides; a clock behind it is capped by the turn time.
        auto until = std::chrono::duration_cast<milliseconds>(deadline - wall);
        until = std::max(until, milliseconds{0});
        if (span.count() == 0 || until < span) span = until;
    } else if (span.count() == 0) {
        span = kDefaultTurnTime;
    }
    if (use_time_bank) span += milliseconds{prompt.time_bank_ms()};
    return Budget(receipt + span - margin);
}

std::chrono::milliseconds Budget::remaining() const {
    if (end_ == Clock::time_point::max()) return std::chrono::milliseconds::max();
    const auto left = end_ - Clock::now();
    if (left <= Clock::duration::zero()) return std::chrono::milliseconds{0};
    return std::chrono::duration_cast<std::chrono::milliseconds>(left);
}

Prompt Prompt::from_proto(const pb::TurnPrompt& prompt) {
    return from_proto(prompt, Budget::for_prompt(prompt, Budget::Clock::now(),
                                                 Budget::WallClock::now(),
                                                 std::chrono::milliseconds{50}, true));
}

Prompt Prompt::from_proto(const pb::TurnPrompt& prompt, Budget budget) {
    Prompt view;
    view.turn_id = prompt.turn_id();
    view.seat = prompt.seat();
    const auto& ts = prompt.deadline();
    view.deadline = WallClock::time_point{std::chrono::duration_cast<WallClock::duration>(
        std::chrono::seconds{ts.seconds()} + std::chrono::nanoseconds{ts.nanos()})};
    view.turn_time = std::chrono::milliseconds{prompt.turn_time_ms()};
    view.time_bank = std::chrono::milliseconds{prompt.time_bank_ms()};
    view.budget = budget;
    view.hand.assign(prompt.hand().begin(), prompt.hand().end());
    view.legal_plays.reserve(static_cast<std::size_t>(prompt.legal_plays_size()));
    for (const auto& play : prompt.legal_plays()) view.legal_plays.push_back(option_from(play));
    view.can_pass = prompt.can_pass();
    view.is_lead = prompt.is_lead();
    view.attempts_left = prompt.attempts_left();

    const auto& state = prompt.state();
    view.hand_number = state.hand_number();
    if (state.has_table() && state.table().cards_size() > 0) view.table = option_from(state.table());
    if (state.has_table_seat()) view.table_seat = state.table_seat();
    view.card_counts.assign(state.card_counts().begin(), state.card_counts().end());
    view.must_include = state.must_include();
    view.played_cards.assign(state.played_cards().begin(), state.played_cards().end());
    view.revolution = state.revolution();
    view.raw = prompt;
    return view;
}

bool Prompt::holds(const std::string& card) const {
    const std::string wanted = upper(card);
    return std::any_of(hand.begin(), hand.end(),
                       [&](const std::string& c) { return upper(c) == wanted; });
}

Rejection Rejection::from(const pb::ActionResult& result) {
    Rejection r;
    r.turn_id = result.turn_id();
    r.reason = result.reason();
    r.reason_name = pusoy::reason_name(result.reason());
    r.message = result.message();
    r.attempts_left = result.attempts_left();
    r.raw = result;
    return r;
}

std::string Rejection::to_string() const {
    std::string text = reason_name;
    if (!message.empty()) text += " (" + message + ")";
    return text + ", " + std::to_string(attempts_left) + " attempts left";
}

Choice fallback(const Prompt& prompt) {
    if (prompt.can_pass) return Choice::pass();
    if (!prompt.legal_plays.empty()) return prompt.legal_plays.front().choice();
    // No list of legal plays: a single is a legal lead unless an opening card is required.
    if (!prompt.must_include.empty()) return Choice::play({prompt.must_include});
    if (!prompt.hand.empty()) return Choice::play({prompt.hand.front()});
    return Choice::pass();
}

std::string card_not_in_hand(const std::vector<std::string>& hand) {
    std::vector<std::string> held;
    held.reserve(hand.size());
    for (const auto& card : hand) held.push_back(upper(card));
    for (const char* r = kRanks; *r; ++r) {
        for (const char* s = kSuits; *s; ++s) {
            const std::string card{*r, *s};
            if (std::find(held.begin(), held.end(), card) == held.end()) return card;
        }
    }
    return {};
}

Choice misbehave_choice(const Prompt& prompt) {
    const std::string card = card_not_in_hand(prompt.hand);
    if (card.empty()) return fallback(prompt);
    return Choice::play({card});
}

std::string reason_name(pb::RejectionReason reason) {
    return strip_prefix(pb::RejectionReason_Name(reason), "REJECTION_REASON_", static_cast<int>(reason));
}

std::string refusal_name(pb::RefusalReason reason) {
    return strip_prefix(pb::RefusalReason_Name(reason), "REFUSAL_REASON_", static_cast<int>(reason));
}

std::string to_string(const Choice& choice) {
    if (choice.is_pass()) return "pass";
    std::ostringstream out;
    out << '[';
    for (std::size_t i = 0; i < choice.cards.size(); ++i) out << (i ? " " : "") << choice.cards[i];
    out << ']';
    return out.str();
}

}  // namespace pusoy
