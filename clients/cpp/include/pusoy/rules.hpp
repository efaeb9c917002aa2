// The comparator (docs/kits.md, section 8): what combination cards form under the rules in
// force, and whether a play may answer the table. The same answers as the referee's
// engine, checked against clients/conformance/judge_cases.jsonl.
//
//   pusoy::Rules rules = pusoy::Rules::from(welcome.config().rules());
//   rules.classify({"9S", "9D"}, false);        // a pair
//   rules.beats({"2S"}, {"2H"}, false);         // true under big-two's suit order
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pusoy/proto.hpp"

namespace pusoy {

struct Rules {
    /// "clubs-low" (C < S < H < D) or "diamonds-low" (D < C < H < S).
    std::string suit_order = "clubs-low";
    /// "wrap-high", "wrap-low" or "none-with-two".
    std::string straights = "wrap-high";
    /// "ranked" (a higher category beats a lower) or "locked".
    std::string five_card_categories = "ranked";
    /// Whether five-card hands are played at all.
    bool five_card_hands = true;
    /// Whether 3-4-5-6-7 beats every other straight.
    bool lowest_straight_beats_straights = false;
    /// Whether a four of a kind beats any play but a higher bomb or a straight flush.
    bool bomb = false;

    /// A classified play: what it is, its cards, and its strength (larger is stronger).
    struct Combo {
        pb::Combination kind = pb::COMBINATION_UNSPECIFIED;
        std::vector<std::string> cards;
        int key = 0;
    };

    /// The rules of a Welcome's configuration (pusoy-dos's for what is unset).
    static Rules from(const pb::Rules& rules);

    /// A card's strength (larger is stronger); -1 for text that is no card.
    int card_key(const std::string& card, bool revolution) const;
    /// The cards in ascending order under the rules (the referee's canonical order).
    std::vector<std::string> sorted(std::vector<std::string> cards, bool revolution) const;
    /// The combination the cards form, or none when they are no play (or not cards).
    std::optional<Combo> classify(const std::vector<std::string>& cards, bool revolution) const;
    /// Whether `play` may answer `table`: both plays; the same number of cards (unless a
    /// bomb), the same category when categories are locked, and stronger.
    bool beats(const std::vector<std::string>& play, const std::vector<std::string>& table,
               bool revolution) const;
};

/// The rank (0..12, 3 to 2) and suit (0..3, C S H D) of a card such as "9S", "10h";
/// none for text that is no card.
std::optional<std::pair<int, int>> parse_card(const std::string& text);

/// Free-function spellings of the contract (docs/kits.md, section 1).
inline std::optional<Rules::Combo> classify(const Rules& rules, const std::vector<std::string>& cards,
                                            bool revolution = false) {
    return rules.classify(cards, revolution);
}
inline bool beats(const Rules& rules, const std::vector<std::string>& play,
                  const std::vector<std::string>& table, bool revolution = false) {
    return rules.beats(play, table, revolution);
}

}  // namespace pusoy
