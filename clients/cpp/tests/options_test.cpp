// The command line and environment of a bot.
#include <gtest/gtest.h>

#include <map>

#include "pusoy/cli.hpp"

namespace pusoy {
namespace {

auto env(std::map<std::string, std::string> values) {
    return [values](const std::string& name) -> std::optional<std::string> {
        auto it = values.find(name);
        if (it == values.end()) return std::nullopt;
        return it->second;
    };
}

TEST(CommandLine, ReadsFlags) {
    const auto cl = parse_command_line({"--address", "127.0.0.1:9", "--token", "t1", "--misbehave"},
                                       env({}));
    EXPECT_TRUE(cl.error.empty()) << cl.error;
    EXPECT_EQ(cl.options.address, "127.0.0.1:9");
    EXPECT_EQ(cl.options.token, "t1");
    EXPECT_TRUE(cl.options.misbehave);
}

TEST(CommandLine, ReadsFlagsWithEquals) {
    const auto cl = parse_command_line({"--address=h:1", "--token=t2"}, env({}));
    EXPECT_TRUE(cl.error.empty()) << cl.error;
    EXPECT_EQ(cl.options.address, "h:1");
    EXPECT_EQ(cl.options.token, "t2");
    EXPECT_FALSE(cl.options.misbehave);
}

TEST(CommandLine, FallsBackToTheEnvironment) {
    const auto cl = parse_command_line(
        {}, env({{"PUSOY_ADDRESS", "h:2"}, {"PUSOY_TOKEN", "t3"}, {"PUSOY_MISBEHAVE", "1"}}));
    EXPECT_TRUE(cl.error.empty()) << cl.error;
    EXPECT_EQ(cl.options.address, "h:2");
    EXPECT_EQ(cl.options.token, "t3");
    EXPECT_TRUE(cl.options.misbehave);
}

TEST(CommandLine, FlagsWinOverTheEnvironment) {
    const auto cl = parse_command_line({"--token", "flag"},
                                       env({{"PUSOY_TOKEN", "env"}, {"PUSOY_MISBEHAVE", "0"}}));
    EXPECT_EQ(cl.options.token, "flag");
    EXPECT_EQ(cl.options.address, "127.0.0.1:50051");
    EXPECT_FALSE(cl.options.misbehave);
}

TEST(CommandLine, StartsFromTheGivenDefaults) {
    RunOptions defaults;
    defaults.deadline_margin = std::chrono::milliseconds{200};
    defaults.address = "h:3";
    const auto cl = parse_command_line({"--token", "t"}, env({}), defaults);
    EXPECT_EQ(cl.options.deadline_margin.count(), 200);
    EXPECT_EQ(cl.options.address, "h:3");
}

TEST(CommandLine, NeedsAToken) {
    EXPECT_NE(parse_command_line({}, env({})).error, "");
    EXPECT_NE(parse_command_line({"--token"}, env({})).error, "");
    EXPECT_NE(parse_command_line({"--bogus", "--token", "t"}, env({})).error, "");
    EXPECT_TRUE(parse_command_line({"--help"}, env({})).help);
}

}  // namespace
}  // namespace pusoy
