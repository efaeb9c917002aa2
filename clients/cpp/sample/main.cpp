// The sample bot's program: `bot --address A --token T [--misbehave]`, or the
// environment (PUSOY_ADDRESS, PUSOY_TOKEN, PUSOY_MISBEHAVE=1).
#include "random_bot.hpp"

int main(int argc, char** argv) {
    sample::RandomBot bot;
    return pusoy::run_main(bot, argc, argv);
}
