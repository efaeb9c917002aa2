#include "pusoy/tracker.hpp"

#include <algorithm>
#include <set>

namespace pusoy {

void Tracker::on_welcome(const pb::Welcome& welcome) {
    seat_ = static_cast<int>(welcome.seat());
    rules_ = Rules::from(welcome.config().rules());
    pass_locks_out_ = welcome.config().rules().pass_locks_out();
}

void Tracker::on_snapshot(const pb::Snapshot& snapshot) {
    const auto& st = snapshot.state();
    hand_number_ = st.hand_number();
    hand_.assign(snapshot.hand().begin(), snapshot.hand().end());
    card_counts_ = {};
    for (int i = 0; i < std::min(4, st.card_counts_size()); ++i) card_counts_[i] = st.card_counts(i);
    played_cards_.assign(st.played_cards().begin(), st.played_cards().end());
    trick_.clear();
    for (const auto& t : st.trick()) {
        TrickEntry entry{t.seat(), {}};
        if (!t.pass()) entry.cards.assign(t.play().cards().begin(), t.play().cards().end());
        trick_.push_back(std::move(entry));
    }
    table_.assign(st.table().cards().begin(), st.table().cards().end());
    table_seat_ = st.has_table_seat() ? std::optional<std::uint32_t>(st.table_seat()) : std::nullopt;
    locked_out_ = {};
    for (int i = 0; i < std::min(4, st.locked_out_size()); ++i) locked_out_[i] = st.locked_out(i);
    revolution_ = st.revolution();
    totals_ = {};
    for (int i = 0; i < std::min(4, st.totals_size()); ++i) totals_[i] = st.totals(i);
    hands_won_ = {};
    for (int i = 0; i < std::min(4, st.hands_won_size()); ++i) hands_won_[i] = st.hands_won(i);
}

void Tracker::on_event(const pb::Event& event) {
    switch (event.kind_case()) {
        case pb::Event::kHandDealt: {
            const auto& d = event.hand_dealt();
            hand_number_ = d.hand_number();
            card_counts_ = {};
            for (const auto& h : d.hands()) {
                if (h.seat() < 4) card_counts_[h.seat()] = h.count();
                if (static_cast<int>(h.seat()) == seat_) hand_.assign(h.cards().begin(), h.cards().end());
            }
            played_cards_.clear();
            trick_.clear();
            table_.clear();
            table_seat_.reset();
            revolution_ = false;
            locked_out_ = {};
            break;
        }
        case pb::Event::kPlayed: {
            const auto& p = event.played();
            std::vector<std::string> cards(p.play().cards().begin(), p.play().cards().end());
            if (p.seat() < 4) card_counts_[p.seat()] = p.cards_left();
            played_cards_.insert(played_cards_.end(), cards.begin(), cards.end());
            played_cards_ = rules_.sorted(played_cards_, false);
            trick_.push_back({p.seat(), cards});
            table_ = cards;
            table_seat_ = p.seat();
            revolution_ = p.revolution();
            if (static_cast<int>(p.seat()) == seat_) {
                const std::set<std::string> gone(cards.begin(), cards.end());
                hand_.erase(std::remove_if(hand_.begin(), hand_.end(),
                                           [&](const std::string& c) { return gone.count(c) > 0; }),
                            hand_.end());
            }
            break;
        }
        case pb::Event::kPassed: {
            const auto& p = event.passed();
            trick_.push_back({p.seat(), {}});
            if (pass_locks_out_ && !p.forced_lead_pass() && p.seat() < 4) locked_out_[p.seat()] = true;
            break;
        }
        case pb::Event::kTrickCleared:
            trick_.clear();
            table_.clear();
            table_seat_.reset();
            locked_out_ = {};
            break;
        case pb::Event::kHandEnded: {
            const auto& h = event.hand_ended();
            totals_ = {};
            for (int i = 0; i < std::min(4, h.totals_size()); ++i) totals_[i] = h.totals(i);
            if (h.winner() < 4) hands_won_[h.winner()]++;
            break;
        }
        default:  // connections, rejections and the match's end change nothing tracked here
            break;
    }
}

std::vector<std::string> Tracker::unseen() const {
    static constexpr const char* kRanks = "3456789TJQKA2";
    static constexpr const char* kSuits = "CSHD";
    std::set<std::string> known(hand_.begin(), hand_.end());
    known.insert(played_cards_.begin(), played_cards_.end());
    std::vector<std::string> out;
    for (const char* r = kRanks; *r; ++r) {
        for (const char* s = kSuits; *s; ++s) {
            const std::string card{*r, *s};
            if (!known.count(card)) out.push_back(card);
        }
    }
    return rules_.sorted(out, false);
}

}  // namespace pusoy
