// The sample bot's program: `bot --address A --token T [flags of docs/kits.md]`, or the
// environment (PUSOY_ADDRESS, PUSOY_TOKEN, ...); `bot --help` lists them.
#include "random_bot.hpp"

int main(int argc, char** argv) {
    sample::RandomBot bot;
    return pusoy::run_main(bot, argc, argv);
}
