// >>> Write your bot's logic here. <<<
//
// choose() gets everything about the turn in `prompt` (see include/pusoy/prompt.hpp):
//   prompt.hand           your cards, ascending, e.g. {"3C", "TD", "2S"}
//   prompt.legal_plays    every legal play, weakest first (.cards, .combination);
//                         EMPTY means a pass is the only legal action
//   prompt.can_pass       whether passing is allowed; prompt.is_lead: the table is empty
//   prompt.table          the play to beat (none on a lead), prompt.card_counts, ...
//   prompt.budget         .remaining(), .expired(): answer before it runs out
//   tracker()             the match so far (cards left per seat, played cards, the trick)
// Return pusoy::Choice::play({"3C", "3D"}) or pusoy::Choice::pass().
#include <vector>

#include "random_bot.hpp"

namespace sample {

pusoy::Choice RandomBot::choose(const pusoy::Prompt& prompt) {
    if (prompt.legal_plays.empty()) return pusoy::Choice::pass();  // the only legal action
    const pusoy::Tracker& t = tracker();
    for (std::uint32_t seat = 0; seat < 4; ++seat) {
        if (seat != prompt.seat && t.cards_left(seat) == 1) {
            return strongest(t.rules(), t.revolution(), prompt.legal_plays);
        }
    }
    std::vector<pusoy::Choice> options;
    options.reserve(prompt.legal_plays.size() + 1);
    for (const auto& play : prompt.legal_plays) options.push_back(play.choice());
    if (prompt.can_pass) options.push_back(pusoy::Choice::pass());
    std::uniform_int_distribution<std::size_t> pick(0, options.size() - 1);
    return options[pick(rng_)];
}

pusoy::Choice RandomBot::strongest(const pusoy::Rules& rules, bool revolution,
                                   const std::vector<pusoy::PlayOption>& plays) {
    const pusoy::PlayOption* best = &plays.front();
    long long best_score = -1;
    for (const auto& play : plays) {
        const auto combo = rules.classify(play.cards, revolution);
        const long long score = (static_cast<long long>(play.cards.size()) << 32) + (combo ? combo->key : 0);
        if (score > best_score) {
            best = &play;
            best_score = score;
        }
    }
    return best->choice();
}

}  // namespace sample
