// The bot interface: one method to write, a few hooks to override if useful.
#pragma once

#include <optional>
#include <string>

#include "pusoy/proto.hpp"
#include "pusoy/view.hpp"

namespace pusoy {

/// Subclass and implement choose(). Every method is called from the one thread that
/// runs pusoy::run(), in the order the referee sent things, so a bot needs no locking.
class Bot {
public:
    virtual ~Bot() = default;

    /// The name sent in the Hello (shown in the referee's logs).
    virtual std::string name() const { return "cpp-bot"; }

    /// Whether prompts should list the legal plays (TurnView::legal_plays).
    virtual bool want_legal_plays() const { return true; }

    /// Your move: the cards to play for this prompt, or Choice::pass().
    /// If it throws, or returns after turn.answer_by, the library has sent
    /// fallback(turn) instead (and ignores the late answer).
    virtual Choice choose(const TurnView& turn) = 0;

    /// What to send after the referee rejected an answer for this turn while attempts
    /// are left (turn.attempts_left is updated). By default: fallback(turn).
    virtual Choice on_rejected(const TurnView& turn, const pb::ActionResult& result);

    /// The referee accepted the seat (again, after a reconnect: welcome.reconnect()).
    virtual void on_welcome(const pb::Welcome& welcome);
    /// The seat's view right after every Welcome (to resume after a reconnect).
    virtual void on_snapshot(const pb::Snapshot& snapshot);
    /// Every public event, and the seat's own deal (hand_dealt) and rejections.
    virtual void on_event(const pb::Event& event);
};

/// How the match ended for this bot.
struct MatchOutcome {
    std::uint32_t seat = 0;
    std::string match_id;
    /// The match_ended event; empty when the match ended while the bot was away.
    std::optional<pb::MatchEnded> ended;

    /// The seat's place (1 = first), or 0 when unknown.
    std::uint32_t place() const;
};

}  // namespace pusoy
