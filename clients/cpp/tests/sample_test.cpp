// The sample bot: a uniformly random legal play, pass included when allowed.
#include <gtest/gtest.h>

#include <map>

#include "random_bot.hpp"

namespace {

pusoy::TurnView turn_with(std::vector<std::vector<std::string>> plays, bool can_pass) {
    pusoy::TurnView turn;
    turn.hand = {"3C", "4C", "5C"};
    for (auto& cards : plays) turn.legal_plays.push_back({std::move(cards), pusoy::pb::COMBINATION_SINGLE});
    turn.can_pass = can_pass;
    return turn;
}

TEST(RandomBot, PicksEveryLegalPlayAndThePassAboutEquallyOften) {
    sample::RandomBot bot(7);
    const auto turn = turn_with({{"3C"}, {"4C"}, {"5C"}}, true);
    std::map<std::string, int> seen;
    for (int i = 0; i < 4000; ++i) seen[pusoy::to_string(bot.choose(turn))]++;
    ASSERT_EQ(seen.size(), 4u);  // three plays and the pass
    for (const auto& [choice, count] : seen) {
        EXPECT_GT(count, 800) << choice;
        EXPECT_LT(count, 1200) << choice;
    }
}

TEST(RandomBot, NeverPassesWhenItMustPlay) {
    sample::RandomBot bot(8);
    const auto turn = turn_with({{"3C"}, {"4C"}}, false);
    for (int i = 0; i < 200; ++i) EXPECT_FALSE(bot.choose(turn).is_pass());
}

TEST(RandomBot, WithNothingListedFallsBack) {
    sample::RandomBot bot(9);
    auto turn = turn_with({}, false);
    turn.is_lead = true;
    EXPECT_EQ(bot.choose(turn), pusoy::Choice::play({"3C"}));
}

}  // namespace
