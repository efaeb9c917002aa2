// The command line and environment of a bot (docs/kits.md, section 7).
#include <gtest/gtest.h>

#include <map>

#include "pusoy/options.hpp"

namespace pusoy {
namespace {

auto env(std::map<std::string, std::string> values) {
    return [values](const std::string& name) -> std::optional<std::string> {
        auto it = values.find(name);
        if (it == values.end()) return std::nullopt;
        return it->second;
    };
}

const std::string kTls = PUSOY_CONFORMANCE_DIR "/tls/";

TEST(CommandLine, ReadsEveryFlag) {
    const auto cl = parse_command_line(
        {"--address", "127.0.0.1:9", "--token", "t1", "--misbehave", "--reconnect-window-ms", "1500",
         "--safety-margin-ms=80", "--batch-events", "--tls-ca", kTls + "ca.pem", "--tls-cert",
         kTls + "client.pem", "--tls-key", kTls + "client.key", "--tls-server-name", "localhost"},
        env({}));
    EXPECT_EQ(cl.options.address, "127.0.0.1:9");
    EXPECT_EQ(cl.options.token, "t1");
    EXPECT_TRUE(cl.options.misbehave);
    EXPECT_EQ(cl.options.reconnect_window.count(), 1500);
    EXPECT_EQ(cl.options.safety_margin.count(), 80);
    EXPECT_TRUE(cl.options.batch_events);
    EXPECT_TRUE(cl.options.tls);
    EXPECT_NE(cl.options.tls_ca_pem.find("BEGIN CERTIFICATE"), std::string::npos);
    EXPECT_NE(cl.options.tls_cert_pem.find("BEGIN CERTIFICATE"), std::string::npos);
    EXPECT_NE(cl.options.tls_key_pem.find("PRIVATE KEY"), std::string::npos);
    EXPECT_EQ(cl.options.tls_server_name, "localhost");
}

TEST(CommandLine, HasTheContractsDefaults) {
    const auto cl = parse_command_line({"--token=t2"}, env({}));
    EXPECT_EQ(cl.options.address, "127.0.0.1:50051");
    EXPECT_EQ(cl.options.token, "t2");
    EXPECT_EQ(cl.options.reconnect_window.count(), 60000);
    EXPECT_EQ(cl.options.safety_margin.count(), 50);
    EXPECT_FALSE(cl.options.misbehave);
    EXPECT_FALSE(cl.options.tls);
    EXPECT_FALSE(cl.options.batch_events);
}

TEST(CommandLine, FallsBackToTheEnvironment) {
    const auto cl = parse_command_line(
        {}, env({{"PUSOY_ADDRESS", "h:2"}, {"PUSOY_TOKEN", "t3"}, {"PUSOY_MISBEHAVE", "1"},
                 {"PUSOY_RECONNECT_WINDOW_MS", "700"}, {"PUSOY_SAFETY_MARGIN_MS", "20"},
                 {"PUSOY_TLS", "1"}, {"PUSOY_BATCH_EVENTS", "1"}}));
    EXPECT_EQ(cl.options.address, "h:2");
    EXPECT_EQ(cl.options.token, "t3");
    EXPECT_TRUE(cl.options.misbehave);
    EXPECT_EQ(cl.options.reconnect_window.count(), 700);
    EXPECT_EQ(cl.options.safety_margin.count(), 20);
    EXPECT_TRUE(cl.options.tls);
    EXPECT_TRUE(cl.options.batch_events);
}

TEST(CommandLine, FlagsWinOverTheEnvironment) {
    const auto cl = parse_command_line({"--token", "flag", "--reconnect-window-ms", "5"},
                                       env({{"PUSOY_TOKEN", "env"}, {"PUSOY_MISBEHAVE", "0"},
                                            {"PUSOY_RECONNECT_WINDOW_MS", "9"}}));
    EXPECT_EQ(cl.options.token, "flag");
    EXPECT_EQ(cl.options.reconnect_window.count(), 5);
    EXPECT_FALSE(cl.options.misbehave);
}

TEST(CommandLine, StartsFromTheGivenDefaults) {
    Options defaults;
    defaults.safety_margin = std::chrono::milliseconds{200};
    defaults.address = "h:3";
    const auto cl = parse_command_line({"--token", "t"}, env({}), defaults);
    EXPECT_EQ(cl.options.safety_margin.count(), 200);
    EXPECT_EQ(cl.options.address, "h:3");
}

TEST(CommandLine, UsageErrors) {
    EXPECT_THROW(parse_command_line({}, env({})), UsageError);  // no token
    EXPECT_THROW(parse_command_line({"--token"}, env({})), UsageError);
    EXPECT_THROW(parse_command_line({"--bogus", "--token", "t"}, env({})), UsageError);
    EXPECT_THROW(parse_command_line({"--token", "t", "--reconnect-window-ms", "soon"}, env({})), UsageError);
    EXPECT_THROW(parse_command_line({"--token", "t", "--tls=1"}, env({})), UsageError);
    EXPECT_THROW(parse_command_line({"--token", "t", "--tls-ca", "/nonexistent.pem"}, env({})), UsageError);
    EXPECT_THROW(parse_command_line({"--token", "t", "--tls-cert", kTls + "client.pem"}, env({})), UsageError);
    EXPECT_TRUE(parse_command_line({"--help"}, env({})).help);
}

}  // namespace
}  // namespace pusoy
