#include "pusoy/bot.hpp"

namespace pusoy {

Choice Bot::on_rejected(const Prompt& prompt, const Rejection& /*rejection*/) {
    return fallback(prompt);
}

void Bot::on_welcome(const pb::Welcome& /*welcome*/) {}
void Bot::on_snapshot(const pb::Snapshot& /*snapshot*/) {}
void Bot::on_event(const pb::Event& /*event*/) {}

std::uint32_t Outcome::place() const {
    if (!ended) return 0;
    for (const auto& standing : ended->standings()) {
        for (auto s : standing.seats()) {
            if (s == seat) return standing.place();
        }
    }
    return 0;
}

}  // namespace pusoy
