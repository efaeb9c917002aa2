// A turn to play (Prompt), its time budget (Budget), the answer (Choice), a refused
// answer (Rejection) and the library's safe answer (fallback). docs/kits.md, sections 1-4.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pusoy/proto.hpp"

namespace pusoy {

/// A bot's answer to a prompt: the cards to play, or a pass (no cards).
struct Choice {
    /// The cards, e.g. {"9D", "9S"}; empty means pass.
    std::vector<std::string> cards;

    static Choice pass() { return {}; }
    static Choice play(std::vector<std::string> cards) { return Choice{std::move(cards)}; }
    bool is_pass() const { return cards.empty(); }

    /// The same cards, in any order and letter case.
    bool same_as(const Choice& other) const;

    friend bool operator==(const Choice& a, const Choice& b) { return a.cards == b.cards; }
    friend bool operator!=(const Choice& a, const Choice& b) { return !(a == b); }
};

/// One play: its cards (canonical order) and what combination they form.
struct PlayOption {
    std::vector<std::string> cards;
    pb::Combination combination = pb::COMBINATION_UNSPECIFIED;

    Choice choice() const { return Choice::play(cards); }
};

/// The time left to answer a prompt, on the monotonic clock (docs/kits.md, section 2):
/// min(deadline, receipt + turn time) + the usable time bank - the safety margin.
class Budget {
public:
    using Clock = std::chrono::steady_clock;
    using WallClock = std::chrono::system_clock;

    /// The turn time the referee uses when a prompt has neither a deadline nor a limit.
    static constexpr std::chrono::milliseconds kDefaultTurnTime{5000};

    /// A budget that never runs out.
    Budget() = default;
    explicit Budget(Clock::time_point end) : end_(end) {}

    /// A budget that ends `left` from now (tests, and bots that nest budgets).
    static Budget in(std::chrono::milliseconds left) { return Budget(Clock::now() + left); }

    /// The budget of `prompt`, read off the stream at `receipt` when the wall clock
    /// read `wall`.
    static Budget for_prompt(const pb::TurnPrompt& prompt, Clock::time_point receipt,
                             WallClock::time_point wall, std::chrono::milliseconds margin,
                             bool use_time_bank);

    /// The time left, zero once it has run out.
    std::chrono::milliseconds remaining() const;
    /// Whether it has run out: answer now (the library has sent the fallback).
    bool expired() const { return Clock::now() >= end_; }
    Clock::time_point end() const { return end_; }

private:
    Clock::time_point end_ = Clock::time_point::max();
};

/// Everything a bot needs to answer one prompt, in plain C++ types. The message itself
/// stays available as `raw` for anything not copied here.
struct Prompt {
    using WallClock = std::chrono::system_clock;

    /// The id the answer must name.
    std::uint64_t turn_id = 0;
    /// The seat to act (this bot's seat).
    std::uint32_t seat = 0;
    /// The turn's deadline as sent by the referee (wall clock, time bank excluded), the
    /// per-turn limit and the seat's time bank left.
    WallClock::time_point deadline{};
    std::chrono::milliseconds turn_time{0};
    std::chrono::milliseconds time_bank{0};
    /// The time left to answer: `budget.remaining()`, `budget.expired()`.
    Budget budget;

    /// The seat's cards, ascending in card order, e.g. {"3C", "TD", "2S"}.
    std::vector<std::string> hand;
    /// Every legal play, weakest first. EMPTY (when they were asked for, the default)
    /// means a pass is the only legal action.
    std::vector<PlayOption> legal_plays;
    /// Whether passing is legal now; whether this is a lead (the table is empty).
    bool can_pass = false;
    bool is_lead = false;
    /// Rejected attempts left in this turn before the referee plays a default action.
    std::uint32_t attempts_left = 0;

    /// From the public state: the hand number (from 1), the play to beat (none on a
    /// lead) and who made it, cards left per seat, the card the play must contain (or
    /// empty), every card played so far in this hand, and whether a revolution is on.
    std::uint32_t hand_number = 0;
    std::optional<PlayOption> table;
    std::optional<std::uint32_t> table_seat;
    std::vector<std::uint32_t> card_counts;
    std::string must_include;
    std::vector<std::string> played_cards;
    bool revolution = false;

    /// The message this view was built from.
    pb::TurnPrompt raw;

    /// Reads a prompt; the budget is computed as if it was received now, with the default
    /// margin (the runner passes the budget it computed at receipt).
    static Prompt from_proto(const pb::TurnPrompt& prompt);
    static Prompt from_proto(const pb::TurnPrompt& prompt, Budget budget);

    /// Whether the hand holds this card (canonical text, e.g. "TD").
    bool holds(const std::string& card) const;
};

/// Why the referee refused an answer (ActionResult with accepted false).
struct Rejection {
    std::uint64_t turn_id = 0;
    pb::RejectionReason reason = pb::REJECTION_REASON_UNSPECIFIED;
    /// e.g. "CARD_NOT_IN_HAND".
    std::string reason_name;
    /// The referee's explanation.
    std::string message;
    /// Attempts left in the turn.
    std::uint32_t attempts_left = 0;
    pb::ActionResult raw;

    static Rejection from(const pb::ActionResult& result);
    std::string to_string() const;
};

/// The safe answer (docs/kits.md, section 4): a pass when allowed; else the weakest
/// legal play; else (no legal plays asked for) the card the play must include, or the
/// lowest card of the hand, alone; else a pass.
Choice fallback(const Prompt& prompt);

/// A card of the 52 that is not in `hand`, or an empty string when it holds them all.
std::string card_not_in_hand(const std::vector<std::string>& hand);

/// The --misbehave answer: one card that is NOT in the hand, so the referee rejects it
/// (CARD_NOT_IN_HAND); fallback(prompt) in the impossible case of a full deck.
Choice misbehave_choice(const Prompt& prompt);

/// "CARD_NOT_IN_HAND" for REJECTION_REASON_CARD_NOT_IN_HAND, and so on.
std::string reason_name(pb::RejectionReason reason);

/// "BAD_TOKEN" for REFUSAL_REASON_BAD_TOKEN, and so on.
std::string refusal_name(pb::RefusalReason reason);

/// A choice as text for logs: "pass" or "[3C 3D]".
std::string to_string(const Choice& choice);

}  // namespace pusoy
