// The comparator against the reference judge's verdicts, and the tracker against the
// referee's own public state in recorded streams (clients/conformance, docs/kits.md 8).
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "pusoy/rules.hpp"
#include "pusoy/tracker.hpp"

namespace pusoy {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

std::vector<Struct> lines(const std::string& name) {
    std::ifstream in(std::string(PUSOY_CONFORMANCE_DIR) + "/" + name);
    EXPECT_TRUE(in) << "cannot read " << name;
    std::vector<Struct> out;
    std::string line;
    while (std::getline(in, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        Struct s;
        const auto status = google::protobuf::util::JsonStringToMessage(line, &s);
        EXPECT_TRUE(status.ok()) << status.ToString();
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<std::string> strings(const Value& v) {
    std::vector<std::string> out;
    for (const auto& x : v.list_value().values()) out.push_back(x.string_value());
    return out;
}

TEST(Rules, GiveTheReferenceJudgesVerdicts) {
    const auto cases = lines("judge_cases.jsonl");
    ASSERT_GE(cases.size(), 1000u);
    int checked = 0;
    for (const auto& c : cases) {
        const auto& r = c.fields().at("rules").struct_value().fields();
        Rules rules;
        rules.suit_order = r.at("suit_order").string_value();
        rules.straights = r.at("straights").string_value();
        rules.five_card_categories = r.at("five_card_categories").string_value();
        rules.five_card_hands = r.at("five_card_hands").bool_value();
        rules.lowest_straight_beats_straights = r.at("lowest_straight_beats_straights").bool_value();
        rules.bomb = r.at("bomb").bool_value();
        const bool revolution = c.fields().at("revolution").bool_value();
        const auto play = strings(c.fields().at("play"));
        const Value& table = c.fields().at("table");
        const bool legal = c.fields().at("legal").bool_value();
        const Value& combination = c.fields().at("combination");
        std::string where;
        google::protobuf::util::MessageToJsonString(c, &where);
        const auto combo = classify(rules, play, revolution);
        if (combination.has_null_value()) {
            EXPECT_FALSE(combo.has_value()) << "classify " << where;
        } else {
            std::string want = "COMBINATION_" + combination.string_value();
            for (char& ch : want) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
            ASSERT_TRUE(combo.has_value()) << "classify " << where;
            EXPECT_EQ(pb::Combination_Name(combo->kind), want) << where;
        }
        if (table.has_null_value()) {
            EXPECT_EQ(legal, combo.has_value()) << "lead " << where;
        } else if (combo) {
            EXPECT_EQ(legal, beats(rules, play, strings(table), revolution)) << "beats " << where;
        }
        ++checked;
    }
    EXPECT_EQ(checked, static_cast<int>(cases.size()));
}

TEST(Rules, ReadTheWelcomesRulesAndSortCards) {
    pb::Rules m;
    m.set_suit_order("diamonds-low");
    m.set_five_card_hands(true);
    const Rules rules = Rules::from(m);
    EXPECT_EQ(rules.suit_order, "diamonds-low");
    EXPECT_EQ(rules.straights, "wrap-high");  // unset: pusoy-dos's
    EXPECT_EQ(rules.sorted({"3S", "3D", "3C", "3H"}, false), (std::vector<std::string>{"3D", "3C", "3H", "3S"}));
    EXPECT_TRUE(rules.beats({"2S"}, {"2H"}, false));
    EXPECT_FALSE(rules.classify({"3S", "4S"}, false).has_value());
    EXPECT_FALSE(rules.classify({"ZZ"}, false).has_value());
}

/// What the tracker holds, and what the referee's state in the prompt says, as text.
std::string view(const Tracker& t) {
    std::ostringstream out;
    out << "hand#" << t.hand_number() << " hand";
    for (const auto& c : t.hand()) out << ' ' << c;
    out << " | played";
    for (const auto& c : t.played_cards()) out << ' ' << c;
    out << " | table";
    for (const auto& c : t.table()) out << ' ' << c;
    out << " by " << (t.table_seat() ? std::to_string(*t.table_seat()) : "-") << " | counts";
    for (auto n : t.card_counts()) out << ' ' << n;
    out << " | locked";
    for (bool b : t.locked_out()) out << ' ' << b;
    out << " | revolution " << t.revolution() << " | totals";
    for (auto n : t.totals()) out << ' ' << n;
    out << " | won";
    for (auto n : t.hands_won()) out << ' ' << n;
    out << " | trick";
    for (const auto& e : t.trick()) {
        out << ' ' << e.seat << ':';
        if (e.is_pass()) out << "pass";
        for (const auto& c : e.cards) out << c << ',';
    }
    return out.str();
}

std::string view(const pb::TurnPrompt& p) {
    const auto& st = p.state();
    Tracker t;  // filled from the state, to print it the same way
    pb::Snapshot snapshot;
    *snapshot.mutable_state() = st;
    *snapshot.mutable_hand() = p.hand();
    while (snapshot.mutable_state()->locked_out_size() < 4) snapshot.mutable_state()->add_locked_out(false);
    t.on_snapshot(snapshot);
    return view(t);
}

template <typename M>
M parse(const Value& v) {
    std::string json;
    google::protobuf::util::MessageToJsonString(v.struct_value(), &json);
    M m;
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = true;
    const auto status = google::protobuf::util::JsonStringToMessage(json, &m, options);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return m;
}

TEST(Tracker, HoldsThePublicStateOfEveryPrompt) {
    std::map<std::string, Tracker> trackers;
    int checked = 0;
    for (const auto& line : lines("tracker_streams.jsonl")) {
        const std::string stream = line.fields().at("stream").string_value();
        const std::string kind = line.fields().at("kind").string_value();
        const Value& message = line.fields().at("message");
        Tracker& t = trackers[stream];
        if (kind == "welcome") {
            t.on_welcome(parse<pb::Welcome>(message));
        } else if (kind == "snapshot") {
            t.on_snapshot(parse<pb::Snapshot>(message));
        } else if (kind == "event") {
            t.on_event(parse<pb::Event>(message));
        } else {
            const auto p = parse<pb::TurnPrompt>(message);
            ASSERT_EQ(view(p), view(t)) << stream << " turn " << p.turn_id();
            ++checked;
        }
    }
    EXPECT_EQ(trackers.size(), 3u);
    EXPECT_GE(checked, 100);
}

}  // namespace
}  // namespace pusoy
