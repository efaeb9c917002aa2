// The state tracker (docs/kits.md, section 8): fed the welcome, the snapshot and every
// event, it keeps what the seat may know of the hand. TrackingBot feeds one from its hooks.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pusoy/bot.hpp"
#include "pusoy/proto.hpp"
#include "pusoy/rules.hpp"

namespace pusoy {

class Tracker {
public:
    /// One entry of the trick: a seat and its cards (none for a pass).
    struct TrickEntry {
        std::uint32_t seat = 0;
        std::vector<std::string> cards;
        bool is_pass() const { return cards.empty(); }
        friend bool operator==(const TrickEntry& a, const TrickEntry& b) {
            return a.seat == b.seat && a.cards == b.cards;
        }
    };

    /// Takes the seat and the rules.
    void on_welcome(const pb::Welcome& welcome);
    /// Starts again from the seat's view.
    void on_snapshot(const pb::Snapshot& snapshot);
    /// Keeps the view up to date.
    void on_event(const pb::Event& event);

    /// This bot's seat, -1 before the welcome.
    int seat() const { return seat_; }
    const Rules& rules() const { return rules_; }
    bool pass_locks_out() const { return pass_locks_out_; }
    /// The hand being played (from 1; 0 before the first deal).
    std::uint32_t hand_number() const { return hand_number_; }
    /// This bot's cards.
    const std::vector<std::string>& hand() const { return hand_; }
    /// Cards left per seat.
    const std::array<std::uint32_t, 4>& card_counts() const { return card_counts_; }
    std::uint32_t cards_left(std::uint32_t seat) const { return seat < 4 ? card_counts_[seat] : 0; }
    /// Every card played this hand, in canonical order.
    const std::vector<std::string>& played_cards() const { return played_cards_; }
    /// The current trick, oldest first.
    const std::vector<TrickEntry>& trick() const { return trick_; }
    /// The play to beat (empty on a lead) and who made it.
    const std::vector<std::string>& table() const { return table_; }
    std::optional<std::uint32_t> table_seat() const { return table_seat_; }
    /// Per seat: passed and locked out of this trick.
    const std::array<bool, 4>& locked_out() const { return locked_out_; }
    bool revolution() const { return revolution_; }
    /// Match totals per seat, and hands won per seat.
    const std::array<std::int32_t, 4>& totals() const { return totals_; }
    const std::array<std::uint32_t, 4>& hands_won() const { return hands_won_; }
    /// Cards neither in this bot's hand nor played this hand: the others hold them.
    std::vector<std::string> unseen() const;

private:
    int seat_ = -1;
    Rules rules_;
    bool pass_locks_out_ = false;
    std::uint32_t hand_number_ = 0;
    std::vector<std::string> hand_;
    std::array<std::uint32_t, 4> card_counts_{};
    std::vector<std::string> played_cards_;
    std::vector<TrickEntry> trick_;
    std::vector<std::string> table_;
    std::optional<std::uint32_t> table_seat_;
    std::array<bool, 4> locked_out_{};
    bool revolution_ = false;
    std::array<std::int32_t, 4> totals_{};
    std::array<std::uint32_t, 4> hands_won_{};
};

/// A Bot whose hooks feed a Tracker: subclass it, and read tracker() in choose(). Call
/// the base hooks when you override them.
class TrackingBot : public Bot {
public:
    void on_welcome(const pb::Welcome& welcome) override { tracker_.on_welcome(welcome); }
    void on_snapshot(const pb::Snapshot& snapshot) override { tracker_.on_snapshot(snapshot); }
    void on_event(const pb::Event& event) override { tracker_.on_event(event); }
    const Tracker& tracker() const { return tracker_; }

private:
    Tracker tracker_;
};

}  // namespace pusoy
