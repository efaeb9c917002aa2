// The sample bot. Copy this folder to start your own: keep the class, rewrite
// choose() in strategy.cpp.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "pusoy/client.hpp"

namespace sample {

/// Plays uniformly at random among its legal plays, pass included when allowed.
class RandomBot : public pusoy::Bot {
public:
    explicit RandomBot(std::uint64_t seed = std::random_device{}()) : rng_(seed) {}

    std::string name() const override { return "cpp-random"; }

    /// The bot's logic: see strategy.cpp.
    pusoy::Choice choose(const pusoy::TurnView& turn) override;

private:
    std::mt19937_64 rng_;
};

}  // namespace sample
