// >>> Write your bot's logic here. <<<
//
// choose() gets everything about the turn in `turn` (see include/pusoy/view.hpp):
//   turn.hand          your cards, ascending, e.g. {"3C", "TD", "2S"}
//   turn.legal_plays   every legal play, weakest first: .cards and .combination
//   turn.can_pass      whether passing is allowed; turn.is_lead: the table is empty
//   turn.table         the play to beat (none on a lead), turn.card_counts, ...
//   turn.time_left()   how long before the library sends the fallback for you
// Return pusoy::Choice::play({"3C", "3D"}) or pusoy::Choice::pass().
#include <vector>

#include "random_bot.hpp"

namespace sample {

pusoy::Choice RandomBot::choose(const pusoy::TurnView& turn) {
    std::vector<pusoy::Choice> options;
    options.reserve(turn.legal_plays.size() + 1);
    for (const auto& play : turn.legal_plays) options.push_back(play.choice());
    if (turn.can_pass) options.push_back(pusoy::Choice::pass());
    if (options.empty()) return pusoy::fallback(turn);
    std::uniform_int_distribution<std::size_t> pick(0, options.size() - 1);
    return options[pick(rng_)];
}

}  // namespace sample
