#include "pusoy/messages.hpp"

namespace pusoy {

pb::PlayRequest make_hello(const std::string& token, const std::string& bot_name,
                           bool want_legal_plays, bool batch_events,
                           std::uint32_t protocol_version) {
    pb::PlayRequest request;
    auto* hello = request.mutable_hello();
    hello->set_protocol_version(protocol_version);
    hello->set_token(token);
    hello->set_want_legal_plays(want_legal_plays);
    hello->set_bot_name(bot_name);
    hello->set_batch_events(batch_events);
    return request;
}

pb::PlayRequest make_play_action(std::uint64_t turn_id, const std::vector<std::string>& cards) {
    pb::PlayRequest request;
    auto* action = request.mutable_action();
    action->set_turn_id(turn_id);
    auto* play = action->mutable_play();
    for (const auto& card : cards) play->add_cards(card);
    return request;
}

pb::PlayRequest make_pass_action(std::uint64_t turn_id) {
    pb::PlayRequest request;
    auto* action = request.mutable_action();
    action->set_turn_id(turn_id);
    action->mutable_pass();
    return request;
}

pb::PlayRequest make_action(std::uint64_t turn_id, const Choice& choice) {
    return choice.is_pass() ? make_pass_action(turn_id) : make_play_action(turn_id, choice.cards);
}

}  // namespace pusoy
