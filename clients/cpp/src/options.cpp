#include "pusoy/options.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "pusoy/runner.hpp"

namespace pusoy {
namespace {

bool truthy(const std::string& value) {
    return value == "1" || value == "true" || value == "TRUE" || value == "True" ||
           value == "yes" || value == "on";
}

std::chrono::milliseconds millis(const std::string& name, const std::string& value) {
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
        value.size() > 12) {
        throw UsageError(name + ": not a number of milliseconds: '" + value + "'");
    }
    return std::chrono::milliseconds{std::stoll(value)};
}

std::string read_file(const std::string& path, const std::string& what) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    if (!in || text.str().empty()) throw UsageError("cannot read the " + what + " " + path);
    return text.str();
}

}  // namespace

std::optional<std::string> process_getenv(const std::string& name) {
    const char* value = std::getenv(name.c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
}

std::string usage(const std::string& program) {
    return "usage: " + program +
           " [--address HOST:PORT] [--token TOKEN] [--reconnect-window-ms N]\n"
           "       [--safety-margin-ms N] [--tls] [--tls-ca FILE] [--tls-cert FILE --tls-key FILE]\n"
           "       [--tls-server-name NAME] [--batch-events] [--misbehave]\n"
           "Plays one seat of a pusoy-referee match to its end.\n"
           "  --address              the referee (PUSOY_ADDRESS, default 127.0.0.1:50051)\n"
           "  --token                the seat's secret token (PUSOY_TOKEN; required)\n"
           "  --reconnect-window-ms  how long to try to get the seat back (PUSOY_RECONNECT_WINDOW_MS, 60000)\n"
           "  --safety-margin-ms     answer this long before the budget ends (PUSOY_SAFETY_MARGIN_MS, 50)\n"
           "  --tls                  TLS with the system's trusted CAs (PUSOY_TLS=1)\n"
           "  --tls-ca               PEM CA bundle of the referee's certificate (PUSOY_TLS_CA; implies TLS)\n"
           "  --tls-cert, --tls-key  client certificate and key for mutual TLS (PUSOY_TLS_CERT,\n"
           "                         PUSOY_TLS_KEY; both or neither; imply TLS)\n"
           "  --tls-server-name      the name checked in the referee's certificate (PUSOY_TLS_SERVER_NAME)\n"
           "  --batch-events         events batched into prompts, fewer messages (PUSOY_BATCH_EVENTS=1)\n"
           "  --misbehave            open each hand with a card not held, to exercise rejections\n"
           "                         (PUSOY_MISBEHAVE=1)\n"
           "exit status: 0 the match ended, 1 internal error, 2 refused, 3 referee unreachable,\n"
           "             4 stream failed for good, 64 usage error\n";
}

CommandLine parse_command_line(const std::vector<std::string>& args, const Getenv& getenv,
                               const Options& defaults) {
    struct Flag {
        const char* name;
        const char* env;
        bool takes_value;
    };
    static const Flag kFlags[] = {
        {"--address", "PUSOY_ADDRESS", true},
        {"--token", "PUSOY_TOKEN", true},
        {"--reconnect-window-ms", "PUSOY_RECONNECT_WINDOW_MS", true},
        {"--safety-margin-ms", "PUSOY_SAFETY_MARGIN_MS", true},
        {"--tls", "PUSOY_TLS", false},
        {"--tls-ca", "PUSOY_TLS_CA", true},
        {"--tls-cert", "PUSOY_TLS_CERT", true},
        {"--tls-key", "PUSOY_TLS_KEY", true},
        {"--tls-server-name", "PUSOY_TLS_SERVER_NAME", true},
        {"--batch-events", "PUSOY_BATCH_EVENTS", false},
        {"--misbehave", "PUSOY_MISBEHAVE", false},
    };
    CommandLine cl;
    cl.options = defaults;
    std::vector<std::pair<std::string, std::string>> given;  // flag -> value ("1" for switches)
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "-h" || arg == "--help") {
            cl.help = true;
            continue;
        }
        const auto eq = arg.find('=');
        const std::string name = arg.substr(0, eq);
        const Flag* flag = nullptr;
        for (const auto& f : kFlags) {
            if (name == f.name) flag = &f;
        }
        if (flag == nullptr) throw UsageError("unknown argument: " + arg);
        if (!flag->takes_value) {
            if (eq != std::string::npos) throw UsageError(name + " takes no value");
            given.emplace_back(name, "1");
        } else if (eq != std::string::npos) {
            given.emplace_back(name, arg.substr(eq + 1));
        } else {
            if (i + 1 >= args.size()) throw UsageError(name + " needs a value");
            given.emplace_back(name, args[++i]);
        }
    }
    if (cl.help) return cl;
    auto value = [&](const Flag& f) -> std::optional<std::string> {
        for (auto it = given.rbegin(); it != given.rend(); ++it) {
            if (it->first == f.name) return it->second;
        }
        auto env = getenv(f.env);
        if (env && env->empty()) env.reset();
        return env;
    };
    auto get = [&](const char* name) -> std::optional<std::string> {
        for (const auto& f : kFlags) {
            if (std::string(name) == f.name) return value(f);
        }
        return std::nullopt;
    };
    Options& o = cl.options;
    if (auto v = get("--address")) o.address = *v;
    if (auto v = get("--token")) o.token = *v;
    if (auto v = get("--reconnect-window-ms")) o.reconnect_window = millis("--reconnect-window-ms", *v);
    if (auto v = get("--safety-margin-ms")) o.safety_margin = millis("--safety-margin-ms", *v);
    if (auto v = get("--tls")) o.tls = o.tls || truthy(*v);
    if (auto v = get("--batch-events")) o.batch_events = o.batch_events || truthy(*v);
    if (auto v = get("--misbehave")) o.misbehave = o.misbehave || truthy(*v);
    if (auto v = get("--tls-server-name")) o.tls_server_name = *v;
    if (o.token.empty()) throw UsageError("a seat token is needed: --token or PUSOY_TOKEN");
    if (o.address.empty()) throw UsageError("no referee address: --address or PUSOY_ADDRESS");
    const auto ca = get("--tls-ca");
    const auto cert = get("--tls-cert");
    const auto key = get("--tls-key");
    if (cert.has_value() != key.has_value()) throw UsageError("--tls-cert and --tls-key go together");
    if (ca) {
        o.tls = true;
        o.tls_ca_pem = read_file(*ca, "CA file");
    }
    if (cert) {
        o.tls = true;
        o.tls_cert_pem = read_file(*cert, "client certificate");
        o.tls_key_pem = read_file(*key, "client key");
    }
    return cl;
}

int run_main(Bot& bot, int argc, char** argv, const Options& defaults) {
    const std::string program = argc > 0 ? argv[0] : "bot";
    const std::string name = bot.name();
    std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    CommandLine cl;
    try {
        cl = parse_command_line(args, process_getenv, defaults);
    } catch (const UsageError& e) {
        std::cerr << name << ": " << e.what() << "\n" << usage(program);
        return kExitUsage;
    }
    if (cl.help) {
        std::cout << usage(program);
        return kExitOk;
    }
    std::unique_ptr<Bot> wrapped;
    Bot* playing = &bot;
    if (cl.options.misbehave) {
        wrapped = std::make_unique<MisbehavingBot>(bot);
        playing = wrapped.get();
    }
    try {
        const Outcome outcome = run(*playing, cl.options);
        std::cerr << name << ": match " << outcome.match_id;
        if (outcome.ended && outcome.ended->status() == pb::MATCH_STATUS_CANCELLED) {
            std::cerr << " cancelled (" << outcome.ended->cancel_reason() << "), seat " << outcome.seat;
        } else if (outcome.ended) {
            std::cerr << " is over; seat " << outcome.seat << " placed " << outcome.place();
        } else {
            std::cerr << " is over; seat " << outcome.seat << " (it ended while the bot was away)";
        }
        std::cerr << std::endl;
        return kExitOk;
    } catch (const Refused& e) {
        std::cerr << name << ": " << e.what() << std::endl;
        return kExitRefused;
    } catch (const Unreachable& e) {
        std::cerr << name << ": " << e.what() << std::endl;
        return kExitUnreachable;
    } catch (const RpcFailed& e) {
        std::cerr << name << ": " << e.what() << std::endl;
        return kExitRpc;
    } catch (const std::exception& e) {
        std::cerr << name << ": internal error: " << e.what() << std::endl;
        return kExitError;
    }
}

}  // namespace pusoy
