// Building the Hello, a play action and a pass action.
#include <gtest/gtest.h>

#include "pusoy/messages.hpp"

namespace pusoy {
namespace {

TEST(Messages, HelloCarriesVersionTokenNameAndLegalPlays) {
    const pb::PlayRequest request = make_hello("secret", "my-bot");
    ASSERT_TRUE(request.has_hello());
    EXPECT_EQ(request.hello().protocol_version(), 1u);
    EXPECT_EQ(request.hello().token(), "secret");
    EXPECT_EQ(request.hello().bot_name(), "my-bot");
    EXPECT_TRUE(request.hello().want_legal_plays());
    EXPECT_FALSE(make_hello("t", "b", false).hello().want_legal_plays());
    EXPECT_FALSE(request.hello().batch_events());
    EXPECT_TRUE(make_hello("t", "b", true, true).hello().batch_events());
}

TEST(Messages, PlayActionNamesTheTurnAndTheCards) {
    const pb::PlayRequest request = make_play_action(17, {"9D", "9S"});
    ASSERT_TRUE(request.has_action());
    EXPECT_EQ(request.action().turn_id(), 17u);
    ASSERT_EQ(request.action().kind_case(), pb::Action::kPlay);
    ASSERT_EQ(request.action().play().cards_size(), 2);
    EXPECT_EQ(request.action().play().cards(0), "9D");
    EXPECT_EQ(request.action().play().cards(1), "9S");
}

TEST(Messages, PassActionHasAPassAndNoCards) {
    const pb::PlayRequest request = make_pass_action(18);
    ASSERT_TRUE(request.has_action());
    EXPECT_EQ(request.action().turn_id(), 18u);
    EXPECT_EQ(request.action().kind_case(), pb::Action::kPass);
    EXPECT_FALSE(request.action().has_play());
}

TEST(Messages, ActionFromAChoice) {
    EXPECT_EQ(make_action(5, Choice::pass()).action().kind_case(), pb::Action::kPass);
    const pb::PlayRequest play = make_action(6, Choice::play({"2S"}));
    EXPECT_EQ(play.action().kind_case(), pb::Action::kPlay);
    EXPECT_EQ(play.action().play().cards(0), "2S");
    // Round trip through the wire format.
    pb::PlayRequest parsed;
    ASSERT_TRUE(parsed.ParseFromString(play.SerializeAsString()));
    EXPECT_EQ(parsed.action().turn_id(), 6u);
    EXPECT_EQ(parsed.action().play().cards(0), "2S");
}

}  // namespace
}  // namespace pusoy
