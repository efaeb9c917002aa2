// Building the messages a bot sends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pusoy/proto.hpp"
#include "pusoy/prompt.hpp"

namespace pusoy {

/// The first message of every stream.
pb::PlayRequest make_hello(const std::string& token, const std::string& bot_name,
                           bool want_legal_plays = true, bool batch_events = false,
                           std::uint32_t protocol_version = kProtocolVersion);

/// Action{turn_id, play: Cards{cards}}.
pb::PlayRequest make_play_action(std::uint64_t turn_id, const std::vector<std::string>& cards);

/// Action{turn_id, pass: Pass{}}.
pb::PlayRequest make_pass_action(std::uint64_t turn_id);

/// The action for a Choice: a pass when it has no cards, else a play.
pb::PlayRequest make_action(std::uint64_t turn_id, const Choice& choice);

}  // namespace pusoy
