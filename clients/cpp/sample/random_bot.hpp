// The sample bot. Copy this folder to start your own: keep the class, rewrite
// choose() in strategy.cpp.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pusoy/client.hpp"

namespace sample {

/// A random legal play, pass included when allowed, except when an opponent is about to
/// go out: then its strongest legal play (by the tracker and the comparator).
class RandomBot : public pusoy::TrackingBot {
public:
    explicit RandomBot(std::uint64_t seed = std::random_device{}()) : rng_(seed) {}

    std::string name() const override { return "cpp-sample"; }

    /// The bot's logic: see strategy.cpp.
    pusoy::Choice choose(const pusoy::Prompt& prompt) override;

    /// The legal play with the most cards, then the highest key under the rules.
    static pusoy::Choice strongest(const pusoy::Rules& rules, bool revolution,
                                   const std::vector<pusoy::PlayOption>& plays);

private:
    std::mt19937_64 rng_;  // used only on the bot's worker thread: no lock needed
};

}  // namespace sample
