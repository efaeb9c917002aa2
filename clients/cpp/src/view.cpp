#include "pusoy/view.hpp"

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

}  // namespace

TurnView TurnView::from_proto(const pb::TurnPrompt& prompt) {
    TurnView view;
    view.turn_id = prompt.turn_id();
    view.seat = prompt.seat();
    const auto& ts = prompt.deadline();
    view.deadline = WallClock::time_point{std::chrono::duration_cast<WallClock::duration>(
        std::chrono::seconds{ts.seconds()} + std::chrono::nanoseconds{ts.nanos()})};
    view.turn_time = std::chrono::milliseconds{prompt.turn_time_ms()};
    view.time_bank = std::chrono::milliseconds{prompt.time_bank_ms()};

    // Time to the deadline as seen now; never more than the turn's limit (a skewed
    // clock must not make the bot wait past what the referee allows).
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
        view.deadline - WallClock::now());
    remaining = std::max(remaining, std::chrono::milliseconds{0});
    if (view.turn_time.count() > 0) remaining = std::min(remaining, view.turn_time);
    view.answer_by = Clock::now() + remaining;

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

bool TurnView::holds(const std::string& card) const {
    const std::string wanted = upper(card);
    return std::any_of(hand.begin(), hand.end(),
                       [&](const std::string& c) { return upper(c) == wanted; });
}

std::chrono::milliseconds TurnView::time_left() const {
    const auto left = answer_by - Clock::now();
    if (left <= Clock::duration::zero()) return std::chrono::milliseconds{0};
    return std::chrono::duration_cast<std::chrono::milliseconds>(left);
}

Choice fallback(const TurnView& turn) {
    if (turn.can_pass) return Choice::pass();
    if (!turn.legal_plays.empty()) return turn.legal_plays.front().choice();
    // No list of legal plays: a single card is always a play on a lead, as long as it
    // is the opening card when one is required.
    if (turn.is_lead && !turn.hand.empty()) {
        if (!turn.must_include.empty() && turn.holds(turn.must_include)) {
            return Choice::play({upper(turn.must_include)});
        }
        return Choice::play({turn.hand.front()});
    }
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

Choice misbehave_choice(const TurnView& turn) {
    const std::string card = card_not_in_hand(turn.hand);
    if (card.empty()) return fallback(turn);
    return Choice::play({card});
}

std::string reason_name(pb::RejectionReason reason) {
    std::string name = pb::RejectionReason_Name(reason);
    const std::string prefix = "REJECTION_REASON_";
    if (name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
    return name.empty() ? std::to_string(static_cast<int>(reason)) : name;
}

std::string refusal_name(pb::RefusalReason reason) {
    std::string name = pb::RefusalReason_Name(reason);
    const std::string prefix = "REFUSAL_REASON_";
    if (name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
    return name.empty() ? std::to_string(static_cast<int>(reason)) : name;
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
