// Command-line entry for a bot: --address/--token/--misbehave or the environment.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pusoy/bot.hpp"
#include "pusoy/runner.hpp"

namespace pusoy {

struct CommandLine {
    RunOptions options;
    bool help = false;
    /// Set when the arguments are unusable (the message says why).
    std::string error;
};

/// Reads --address A, --token T, --misbehave (also --address=A, --token=T) and, for
/// what is not given, PUSOY_ADDRESS, PUSOY_TOKEN and PUSOY_MISBEHAVE=1, over
/// `defaults`. `getenv` is injectable for tests.
CommandLine parse_command_line(
    const std::vector<std::string>& args,
    const std::function<std::optional<std::string>(const std::string&)>& getenv,
    const RunOptions& defaults = {});

/// The usage text.
std::string usage(const std::string& program);

/// main() for a bot: parses the command line over `defaults` (e.g. a larger
/// deadline_margin), runs the bot and returns the exit code: 0 when the match ended
/// (or was cancelled by the organiser), 2 refused, 3 referee unreachable, 4 other RPC
/// failure, 64 bad usage, 1 anything else.
int run_main(Bot& bot, int argc, char** argv, const RunOptions& defaults = {});

}  // namespace pusoy
