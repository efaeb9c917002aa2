#include "pusoy/rules.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <map>
#include <set>

namespace pusoy {
namespace {

constexpr const char* kRanks = "3456789TJQKA2";
constexpr const char* kSuits = "CSHD";
constexpr int kShift = 1 << 20;  // five-card keys: category * kShift + the key within it

struct Sequence {
    std::array<int, 5> ranks;
    int tie;  // the rank whose suit breaks ties between equal straights
};

int eff(int rank, bool revolution) { return revolution ? 12 - rank : rank; }

}  // namespace

std::optional<std::pair<int, int>> parse_card(const std::string& text) {
    std::string t;
    for (char c : text) {
        if (!std::isspace(static_cast<unsigned char>(c))) {
            t += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
    }
    if (t.size() == 3 && t[0] == '1' && t[1] == '0') t = "T" + t.substr(2);
    if (t.size() != 2) return std::nullopt;
    const char* r = std::strchr(kRanks, t[0]);
    const char* s = std::strchr(kSuits, t[1]);
    if (t[0] == '\0' || t[1] == '\0' || r == nullptr || s == nullptr) return std::nullopt;
    return std::make_pair(static_cast<int>(r - kRanks), static_cast<int>(s - kSuits));
}

Rules Rules::from(const pb::Rules& m) {
    Rules r;
    if (!m.suit_order().empty()) r.suit_order = m.suit_order();
    if (!m.straights().empty()) r.straights = m.straights();
    if (!m.five_card_categories().empty()) r.five_card_categories = m.five_card_categories();
    r.five_card_hands = m.five_card_hands();
    r.lowest_straight_beats_straights = m.lowest_straight_beats_straights();
    r.bomb = m.bomb();
    return r;
}

namespace {

int suit_rank(const Rules& rules, int suit) {
    static constexpr int kDiamondsLow[] = {1, 3, 2, 0};
    return rules.suit_order == "diamonds-low" ? kDiamondsLow[suit] : suit;
}

std::vector<Sequence> sequences(const Rules& rules) {
    std::vector<Sequence> normal;
    for (int i = 0; i < 8; ++i) normal.push_back({{i, i + 1, i + 2, i + 3, i + 4}, i + 4});
    const std::array<int, 5> a2345{11, 12, 0, 1, 2};
    const std::array<int, 5> t23456{12, 0, 1, 2, 3};
    std::vector<Sequence> out;
    if (rules.straights == "none-with-two") {
        out = normal;
    } else if (rules.straights == "wrap-high") {
        out = normal;
        out.push_back({a2345, 12});
        out.push_back({t23456, 12});
    } else {  // wrap-low: the top of the sequence breaks ties
        out.push_back({a2345, 2});
        out.push_back({t23456, 3});
        out.insert(out.end(), normal.begin(), normal.end());
    }
    return out;
}

}  // namespace

int Rules::card_key(const std::string& card, bool revolution) const {
    const auto rs = parse_card(card);
    if (!rs) return -1;
    return eff(rs->first, revolution) * 4 + suit_rank(*this, rs->second);
}

std::vector<std::string> Rules::sorted(std::vector<std::string> cards, bool revolution) const {
    std::stable_sort(cards.begin(), cards.end(), [&](const std::string& a, const std::string& b) {
        return card_key(a, revolution) < card_key(b, revolution);
    });
    return cards;
}

std::optional<Rules::Combo> Rules::classify(const std::vector<std::string>& cards,
                                            bool revolution) const {
    const std::size_t n = cards.size();
    std::vector<int> ranks, suits;
    std::set<int> seen, suit_set;
    std::map<int, int> counts;
    for (const auto& card : cards) {
        const auto rs = parse_card(card);
        if (!rs || !seen.insert(rs->first * 4 + rs->second).second) return std::nullopt;
        ranks.push_back(rs->first);
        suits.push_back(rs->second);
        counts[rs->first]++;
        suit_set.insert(rs->second);
    }
    auto combo = [&](pb::Combination kind, int key) { return Combo{kind, cards, key}; };
    if (n == 1) {
        return combo(pb::COMBINATION_SINGLE, eff(ranks[0], revolution) * 4 + suit_rank(*this, suits[0]));
    }
    if (n == 2 || n == 3) {
        if (counts.size() != 1) return std::nullopt;
        if (n == 3) return combo(pb::COMBINATION_TRIPLE, eff(ranks[0], revolution));
        const int suit = std::max(suit_rank(*this, suits[0]), suit_rank(*this, suits[1]));
        return combo(pb::COMBINATION_PAIR, eff(ranks[0], revolution) * 4 + suit);
    }
    if (n != 5 || !five_card_hands) return std::nullopt;
    const bool flush = suit_set.size() == 1;
    if (counts.size() == 5) {
        const auto seqs = sequences(*this);
        const int size = static_cast<int>(seqs.size());
        for (int i = 0; i < size; ++i) {
            const auto& seq = seqs[static_cast<std::size_t>(i)];
            const bool match = std::all_of(seq.ranks.begin(), seq.ranks.end(),
                                           [&](int rank) { return counts.count(rank) > 0; });
            if (!match) continue;
            int order = revolution ? size - 1 - i : i;
            const int flush_order = order;
            if (lowest_straight_beats_straights && seq.ranks[0] == 0 && seq.ranks[4] == 4) order = size;
            int tie_suit = 0;
            for (std::size_t j = 0; j < n; ++j) {
                if (ranks[j] == seq.tie) tie_suit = suits[j];
            }
            if (flush) {
                return combo(pb::COMBINATION_STRAIGHT_FLUSH,
                             4 * kShift + flush_order * 4 + suit_rank(*this, tie_suit));
            }
            return combo(pb::COMBINATION_STRAIGHT, order * 4 + suit_rank(*this, tie_suit));
        }
        if (flush) {
            int eff_ranks = 0;
            for (const auto& [rank, count] : counts) eff_ranks |= 1 << eff(rank, revolution);
            return combo(pb::COMBINATION_FLUSH, kShift + (suit_rank(*this, suits[0]) << 13) + eff_ranks);
        }
        return std::nullopt;
    }
    if (counts.size() == 2) {
        for (const auto& [rank, count] : counts) {
            if (count == 3) return combo(pb::COMBINATION_FULL_HOUSE, 2 * kShift + eff(rank, revolution));
            if (count == 4) return combo(pb::COMBINATION_FOUR_OF_A_KIND, 3 * kShift + eff(rank, revolution));
        }
    }
    return std::nullopt;
}

bool Rules::beats(const std::vector<std::string>& play, const std::vector<std::string>& table,
                  bool revolution) const {
    const auto p = classify(play, revolution);
    const auto t = classify(table, revolution);
    if (!p || !t) return false;
    if (bomb && p->kind == pb::COMBINATION_FOUR_OF_A_KIND) {
        if (t->kind == pb::COMBINATION_STRAIGHT_FLUSH) return false;
        if (t->kind == pb::COMBINATION_FOUR_OF_A_KIND) return p->key > t->key;
        return true;
    }
    if (p->cards.size() != t->cards.size()) return false;
    if (five_card_categories == "locked" && p->kind != t->kind) return false;
    return p->key > t->key;
}

}  // namespace pusoy
