#include "pusoy/cli.hpp"

#include <cstdlib>
#include <iostream>

namespace pusoy {
namespace {

bool truthy(const std::string& value) {
    return value == "1" || value == "true" || value == "TRUE" || value == "True" ||
           value == "yes" || value == "on";
}

}  // namespace

std::string usage(const std::string& program) {
    return "usage: " + program +
           " [--address HOST:PORT] [--token TOKEN] [--misbehave]\n"
           "\n"
           "Plays one seat of a pusoy-referee match to its end.\n"
           "  --address A   the referee (default: $PUSOY_ADDRESS, else 127.0.0.1:50051)\n"
           "  --token T     the seat's token (default: $PUSOY_TOKEN)\n"
           "  --misbehave   first answer of each hand is a card not in the hand\n"
           "                (also PUSOY_MISBEHAVE=1), to check rejection recovery\n"
           "Exit status: 0 match over, 2 refused, 3 referee unreachable, 4 RPC error,\n"
           "64 bad usage, 1 other errors.\n";
}

CommandLine parse_command_line(
    const std::vector<std::string>& args,
    const std::function<std::optional<std::string>(const std::string&)>& getenv,
    const RunOptions& defaults) {
    CommandLine cl;
    cl.options = defaults;
    std::optional<std::string> address, token;
    bool misbehave = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        auto value_of = [&](const std::string& flag) -> std::optional<std::string> {
            if (arg == flag) {
                if (i + 1 >= args.size()) {
                    cl.error = flag + " needs a value";
                    return std::nullopt;
                }
                return args[++i];
            }
            return arg.substr(flag.size() + 1);  // --flag=value
        };
        if (arg == "-h" || arg == "--help") {
            cl.help = true;
        } else if (arg == "--misbehave") {
            misbehave = true;
        } else if (arg == "--address" || arg.rfind("--address=", 0) == 0) {
            address = value_of("--address");
        } else if (arg == "--token" || arg.rfind("--token=", 0) == 0) {
            token = value_of("--token");
        } else {
            cl.error = "unknown argument: " + arg;
        }
        if (!cl.error.empty()) return cl;
    }
    if (!address) address = getenv("PUSOY_ADDRESS");
    if (!token) token = getenv("PUSOY_TOKEN");
    if (!misbehave) {
        const auto env = getenv("PUSOY_MISBEHAVE");
        misbehave = env && truthy(*env);
    }
    if (address && !address->empty()) cl.options.address = *address;
    if (token) cl.options.token = *token;
    cl.options.misbehave = cl.options.misbehave || misbehave;
    if (!cl.help && cl.options.token.empty()) {
        cl.error = "a seat token is needed: --token or PUSOY_TOKEN";
    }
    return cl;
}

int run_main(Bot& bot, int argc, char** argv, const RunOptions& defaults) {
    const std::string program = argc > 0 ? argv[0] : "bot";
    std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    const CommandLine cl = parse_command_line(
        args,
        [](const std::string& name) {
            const char* value = std::getenv(name.c_str());
            return value ? std::optional<std::string>(value) : std::nullopt;
        },
        defaults);
    if (cl.help) {
        std::cout << usage(program);
        return 0;
    }
    if (!cl.error.empty()) {
        std::cerr << program << ": " << cl.error << "\n" << usage(program);
        return 64;
    }
    const std::string name = bot.name();
    try {
        const MatchOutcome outcome = run(bot, cl.options);
        std::cout << name << ": match " << outcome.match_id;
        if (outcome.ended && outcome.ended->status() == pb::MATCH_STATUS_CANCELLED) {
            std::cout << " cancelled (" << outcome.ended->cancel_reason() << "), seat "
                      << outcome.seat;
        } else if (outcome.ended) {
            std::cout << " over, seat " << outcome.seat << " placed " << outcome.place();
        } else {
            std::cout << " over, seat " << outcome.seat;
            std::cout << " (it ended while the bot was disconnected)";
        }
        std::cout << std::endl;
        return 0;
    } catch (const Refused& e) {
        std::cerr << name << ": " << e.what() << std::endl;
        return 2;
    } catch (const Unreachable& e) {
        std::cerr << name << ": " << e.what() << std::endl;
        return 3;
    } catch (const RpcFailed& e) {
        std::cerr << name << ": " << e.what() << std::endl;
        return 4;
    } catch (const std::exception& e) {
        std::cerr << name << ": error: " << e.what() << std::endl;
        return 1;
    }
}

}  // namespace pusoy
