// Reading a prompt into the library's view; the fallback and misbehave choices.
#include <gtest/gtest.h>

#include "pusoy/prompt.hpp"

namespace pusoy {
namespace {

pb::TurnPrompt sample_prompt() {
    pb::TurnPrompt prompt;
    prompt.set_turn_id(42);
    prompt.set_seat(2);
    prompt.mutable_deadline()->set_seconds(1'700'000'000);
    prompt.mutable_deadline()->set_nanos(250'000'000);
    prompt.set_turn_time_ms(2000);
    prompt.set_time_bank_ms(500);
    for (const char* card : {"3C", "3D", "TD", "2S"}) prompt.add_hand(card);
    auto* single = prompt.add_legal_plays();
    single->add_cards("TD");
    single->set_combination(pb::COMBINATION_SINGLE);
    auto* two = prompt.add_legal_plays();
    two->add_cards("2S");
    two->set_combination(pb::COMBINATION_SINGLE);
    prompt.set_can_pass(true);
    prompt.set_is_lead(false);
    prompt.set_attempts_left(3);
    auto* state = prompt.mutable_state();
    state->set_match_id("m-1");
    state->set_hand_number(3);
    state->set_turn(2);
    state->mutable_table()->add_cards("9H");
    state->mutable_table()->set_combination(pb::COMBINATION_SINGLE);
    state->set_table_seat(1);
    for (int n : {13, 12, 4, 9}) state->add_card_counts(static_cast<std::uint32_t>(n));
    state->add_played_cards("9H");
    state->set_revolution(true);
    return prompt;
}

TEST(Prompt, ReadsEveryFieldOfAPrompt) {
    const Prompt view = Prompt::from_proto(sample_prompt());
    EXPECT_EQ(view.turn_id, 42u);
    EXPECT_EQ(view.seat, 2u);
    const auto since_epoch = std::chrono::duration_cast<std::chrono::milliseconds>(
        view.deadline.time_since_epoch());
    EXPECT_EQ(since_epoch.count(), 1'700'000'000'250LL);
    EXPECT_EQ(view.turn_time.count(), 2000);
    EXPECT_EQ(view.time_bank.count(), 500);
    EXPECT_EQ(view.hand, (std::vector<std::string>{"3C", "3D", "TD", "2S"}));
    ASSERT_EQ(view.legal_plays.size(), 2u);
    EXPECT_EQ(view.legal_plays[0].cards, std::vector<std::string>{"TD"});
    EXPECT_EQ(view.legal_plays[0].combination, pb::COMBINATION_SINGLE);
    EXPECT_EQ(view.legal_plays[1].choice(), Choice::play({"2S"}));
    EXPECT_TRUE(view.can_pass);
    EXPECT_FALSE(view.is_lead);
    EXPECT_EQ(view.attempts_left, 3u);
    EXPECT_EQ(view.hand_number, 3u);
    ASSERT_TRUE(view.table.has_value());
    EXPECT_EQ(view.table->cards, std::vector<std::string>{"9H"});
    EXPECT_EQ(view.table_seat, std::optional<std::uint32_t>(1));
    EXPECT_EQ(view.card_counts, (std::vector<std::uint32_t>{13, 12, 4, 9}));
    EXPECT_EQ(view.played_cards, std::vector<std::string>{"9H"});
    EXPECT_TRUE(view.revolution);
    EXPECT_EQ(view.raw.state().match_id(), "m-1");
    EXPECT_TRUE(view.holds("td"));
    EXPECT_FALSE(view.holds("4C"));
}

TEST(Prompt, ALeadHasNoTable) {
    pb::TurnPrompt prompt = sample_prompt();
    prompt.mutable_state()->clear_table();
    prompt.mutable_state()->clear_table_seat();
    prompt.set_is_lead(true);
    const Prompt view = Prompt::from_proto(prompt);
    EXPECT_FALSE(view.table.has_value());
    EXPECT_FALSE(view.table_seat.has_value());
    EXPECT_TRUE(view.is_lead);
}

pb::TurnPrompt timed(std::chrono::system_clock::time_point deadline, std::uint32_t turn_ms,
                     std::uint32_t bank_ms) {
    pb::TurnPrompt prompt = sample_prompt();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline.time_since_epoch()).count();
    prompt.mutable_deadline()->set_seconds(ms / 1000);
    prompt.mutable_deadline()->set_nanos(static_cast<int>(ms % 1000) * 1'000'000);
    prompt.set_turn_time_ms(turn_ms);
    prompt.set_time_bank_ms(bank_ms);
    return prompt;
}

// docs/kits.md, section 2, on fixed clock readings.
TEST(Budget, IsTheDeadlineOrTheTurnTimeWhicheverComesFirstPlusTheBankLessTheMargin) {
    using std::chrono::milliseconds;
    // Whole milliseconds, as the deadlines below are.
    const auto wall = std::chrono::time_point_cast<milliseconds>(std::chrono::system_clock::now());
    const auto at = std::chrono::steady_clock::now();
    auto end = [&](const pb::TurnPrompt& p, bool bank) {
        return std::chrono::duration_cast<milliseconds>(
                   Budget::for_prompt(p, at, wall, milliseconds{50}, bank).end() - at)
            .count();
    };
    EXPECT_EQ(end(timed(wall + milliseconds{1500}, 2000, 0), true), 1450);
    EXPECT_EQ(end(timed(wall + milliseconds{1500}, 2000, 3000), true), 4450);  // the bank counts
    EXPECT_EQ(end(timed(wall + milliseconds{1500}, 2000, 3000), false), 1450);  // unless not wanted
    EXPECT_EQ(end(timed(wall + std::chrono::hours{1}, 2000, 0), true), 1950);  // a clock behind
    EXPECT_EQ(end(timed(wall - milliseconds{5000}, 2000, 0), true), -50);      // a clock ahead: 0
    pb::TurnPrompt none = sample_prompt();
    none.clear_deadline();
    none.set_turn_time_ms(0);
    none.set_time_bank_ms(0);
    EXPECT_EQ(end(none, true), 4950);  // neither: the referee's default, 5 s
}

TEST(Budget, CountsDownOnTheMonotonicClock) {
    const Budget budget = Budget::in(std::chrono::milliseconds{300});
    EXPECT_FALSE(budget.expired());
    EXPECT_GT(budget.remaining().count(), 200);
    EXPECT_LE(budget.remaining().count(), 300);
    const Budget gone = Budget::in(std::chrono::milliseconds{-1});
    EXPECT_TRUE(gone.expired());
    EXPECT_EQ(gone.remaining().count(), 0);
}

TEST(Fallback, PassesWhenAllowed) {
    Prompt view = Prompt::from_proto(sample_prompt());
    EXPECT_EQ(fallback(view), Choice::pass());
}

TEST(Fallback, PlaysTheWeakestLegalPlayWhenItCannotPass) {
    Prompt view = Prompt::from_proto(sample_prompt());
    view.can_pass = false;
    EXPECT_EQ(fallback(view), Choice::play({"TD"}));
}

TEST(Fallback, WithoutLegalPlaysPlaysTheOpeningCardOrTheLowestCard) {
    Prompt view = Prompt::from_proto(sample_prompt());
    view.can_pass = false;
    view.is_lead = true;
    view.legal_plays.clear();
    view.must_include = "3D";
    EXPECT_EQ(fallback(view), Choice::play({"3D"}));
    view.must_include.clear();
    EXPECT_EQ(fallback(view), Choice::play({"3C"}));
}

TEST(Misbehave, PlaysOneCardThatIsNotInTheHand) {
    Prompt view = Prompt::from_proto(sample_prompt());
    const Choice bad = misbehave_choice(view);
    ASSERT_EQ(bad.cards.size(), 1u);
    EXPECT_FALSE(view.holds(bad.cards[0]));
    EXPECT_EQ(bad.cards[0], "3S");  // the lowest card missing: 3C, 3D held; C S H D
}

TEST(Misbehave, FindsAMissingCardInAnyHand) {
    EXPECT_EQ(card_not_in_hand({}), "3C");
    EXPECT_EQ(card_not_in_hand({"3c", "3s", "3h", "3d"}), "4C");
    std::vector<std::string> almost_all;
    for (char r : std::string("3456789TJQKA2")) {
        for (char s : std::string("CSHD")) almost_all.push_back(std::string{r, s});
    }
    almost_all.erase(almost_all.begin() + 30);  // rank 8 of 13 (T), suit 3 of 4 (H)
    EXPECT_EQ(card_not_in_hand(almost_all), "TH");
    almost_all.push_back("TH");
    EXPECT_EQ(card_not_in_hand(almost_all), "");
}

TEST(Names, ReasonsAndRefusalsReadWithoutTheirPrefix) {
    EXPECT_EQ(reason_name(pb::REJECTION_REASON_CARD_NOT_IN_HAND), "CARD_NOT_IN_HAND");
    EXPECT_EQ(refusal_name(pb::REFUSAL_REASON_SEAT_TAKEN), "SEAT_TAKEN");
    EXPECT_EQ(to_string(Choice::pass()), "pass");
    EXPECT_EQ(to_string(Choice::play({"3C", "3D"})), "[3C 3D]");
}

}  // namespace
}  // namespace pusoy
