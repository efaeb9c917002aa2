// The library's view of a turn: what a bot reads to decide, and what it answers.
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

    friend bool operator==(const Choice& a, const Choice& b) { return a.cards == b.cards; }
    friend bool operator!=(const Choice& a, const Choice& b) { return !(a == b); }
};

/// One play: its cards (canonical order) and what combination they form.
struct PlayOption {
    std::vector<std::string> cards;
    pb::Combination combination = pb::COMBINATION_UNSPECIFIED;

    Choice choice() const { return Choice::play(cards); }
};

/// Everything a bot needs to answer one prompt, in plain C++ types.
///
/// Built from a pb::TurnPrompt by TurnView::from_proto; the message itself stays
/// available as `raw` for anything not copied here (time bank details, locked_out,
/// strikes, the trick so far...).
struct TurnView {
    using WallClock = std::chrono::system_clock;
    using Clock = std::chrono::steady_clock;

    /// The id the answer must name.
    std::uint64_t turn_id = 0;
    /// The seat to act (this bot's seat).
    std::uint32_t seat = 0;
    /// The turn's deadline as sent by the referee (wall clock, time bank excluded).
    WallClock::time_point deadline{};
    /// The per-turn limit and the seat's time bank left.
    std::chrono::milliseconds turn_time{0};
    std::chrono::milliseconds time_bank{0};
    /// When the library stops waiting for choose() and sends the fallback instead
    /// (local monotonic clock). Long-thinking bots should finish before this.
    Clock::time_point answer_by = Clock::time_point::max();

    /// The seat's cards, ascending in card order, e.g. {"3C", "TD", "2S"}.
    std::vector<std::string> hand;
    /// Every legal play, weakest first (the library asks for them in its Hello).
    std::vector<PlayOption> legal_plays;
    /// Whether passing is legal now.
    bool can_pass = false;
    /// Whether this is a lead (the table is empty).
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

    /// Reads a prompt into a view. `answer_by` is set from the deadline as seen now.
    static TurnView from_proto(const pb::TurnPrompt& prompt);

    /// Whether the hand holds this card (canonical text, e.g. "TD").
    bool holds(const std::string& card) const;
    /// Time left before answer_by (zero when past).
    std::chrono::milliseconds time_left() const;
};

/// The safe answer: a pass when allowed, else the weakest legal play. Without listed
/// legal plays (a bot that did not ask for them), a lead plays the opening card or the
/// lowest card alone. The library sends it when choose() runs late or throws, and the
/// default Bot::on_rejected returns it.
Choice fallback(const TurnView& turn);

/// A card of the 52 that is not in `hand` (the lowest in rank-major order 3..2, suits
/// C S H D), or an empty string when the hand holds every card.
std::string card_not_in_hand(const std::vector<std::string>& hand);

/// The --misbehave answer: one card that is NOT in the hand, so the referee rejects it
/// (CARD_NOT_IN_HAND). Falls back to fallback(turn) in the impossible case of a full deck.
Choice misbehave_choice(const TurnView& turn);

/// "CARD_NOT_IN_HAND" for REJECTION_REASON_CARD_NOT_IN_HAND, and so on.
std::string reason_name(pb::RejectionReason reason);

/// "BAD_TOKEN" for REFUSAL_REASON_BAD_TOKEN, and so on.
std::string refusal_name(pb::RefusalReason reason);

/// A choice as text for logs: "pass" or "[3C 3D]".
std::string to_string(const Choice& choice);

}  // namespace pusoy
