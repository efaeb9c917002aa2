// The sample bot: a uniformly random legal play, pass included when allowed, and its
// strongest play when an opponent has one card left.
#include <gtest/gtest.h>

#include <map>

#include "random_bot.hpp"

namespace {

pusoy::Prompt turn_with(std::vector<std::vector<std::string>> plays, bool can_pass) {
    pusoy::Prompt turn;
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

TEST(RandomBot, WithNoLegalPlayPasses) {
    sample::RandomBot bot(9);
    auto turn = turn_with({}, false);
    EXPECT_EQ(bot.choose(turn), pusoy::Choice::pass());  // a pass is the only legal action
}

TEST(RandomBot, PlaysItsStrongestWhenAnOpponentHasOneCardLeft) {
    sample::RandomBot bot(10);
    pusoy::pb::Welcome welcome;
    welcome.set_seat(0);
    bot.on_welcome(welcome);
    pusoy::pb::Event dealt;
    auto* d = dealt.mutable_hand_dealt();
    d->set_hand_number(1);
    for (std::uint32_t seat = 0; seat < 4; ++seat) {
        auto* h = d->add_hands();
        h->set_seat(seat);
        h->set_count(seat == 2 ? 1 : 13);
    }
    bot.on_event(dealt);
    const auto turn = turn_with({{"3C"}, {"5C"}, {"4C"}}, true);
    for (int i = 0; i < 50; ++i) EXPECT_EQ(bot.choose(turn), pusoy::Choice::play({"5C"}));
}

}  // namespace
