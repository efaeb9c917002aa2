// The bot interface: one method to write, a few hooks to override if useful.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "pusoy/prompt.hpp"
#include "pusoy/proto.hpp"

namespace pusoy {

/// Subclass and implement choose(). Every method runs on one worker thread of the
/// library's, one call at a time, in the order the referee's messages arrived
/// (docs/kits.md, section 3): a bot needs no locking. The stream is read on another
/// thread meanwhile. When choose() has not answered by prompt.budget, the library sends
/// fallback(prompt) for that turn at once and drops the late answer; C++ cannot
/// interrupt a thread, so a long search should check prompt.budget.expired(). A
/// choose() that blocks only delays the calls queued behind it, never runs beside them.
///
/// Every call is guarded: an exception from choose() sends the fallback, one from a hook
/// loses only that call; either is reported in one line on stderr.
class Bot {
public:
    virtual ~Bot() = default;

    /// Your move: Choice::play({...}) or Choice::pass(). prompt.legal_plays lists every
    /// legal play, weakest first; empty means a pass is the only legal action.
    virtual Choice choose(const Prompt& prompt) = 0;

    /// The name sent in the Hello (shown in the referee's logs).
    virtual std::string name() const { return "cpp-bot"; }
    /// Whether prompts should list the legal plays (they should, unless you generate them).
    virtual bool want_legal_plays() const { return true; }
    /// Whether the seat's time bank counts in prompt.budget (docs/kits.md, section 2).
    virtual bool use_time_bank() const { return true; }

    /// What to send after the referee rejected an answer for the open turn while attempts
    /// are left, under the same budget. By default fallback(prompt). An answer equal to the
    /// one just rejected is not sent again: the referee then acts at its deadline.
    virtual Choice on_rejected(const Prompt& prompt, const Rejection& rejection);

    /// The referee gave the bot its seat (again, after a reconnect: welcome.reconnect()).
    virtual void on_welcome(const pb::Welcome& welcome);
    /// The seat's view, right after every welcome (to resume after a reconnect).
    virtual void on_snapshot(const pb::Snapshot& snapshot);
    /// Every event the seat may see, its own deal included, in order; with batched events,
    /// each event of a prompt (before its choose()) or of a batch.
    virtual void on_event(const pb::Event& event);
};

/// How the match ended for this bot.
struct Outcome {
    std::uint32_t seat = 0;
    std::string match_id;
    /// The match_ended event; empty when the match ended while the bot was away.
    std::optional<pb::MatchEnded> ended;

    /// The seat's place (1 = first), or 0 when unknown.
    std::uint32_t place() const;
};

}  // namespace pusoy
