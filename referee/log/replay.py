"""A match log as readable text: hand by hand, trick by trick."""

from __future__ import annotations

from collections.abc import Iterator

from referee.log.reader import LogRead
from referee.protocol import common

_CAUSE = {
    common.DEFAULT_CAUSE_TIMEOUT: "timed out",
    common.DEFAULT_CAUSE_ILLEGAL_ATTEMPTS: "too many rejected attempts",
    common.DEFAULT_CAUSE_DISCONNECTED: "disconnected",
    common.DEFAULT_CAUSE_STRIKE_LIMIT: "strike limit reached",
}


def _combo(play: common.Play) -> str:
    name = common.Combination.Name(play.combination).removeprefix("COMBINATION_")
    return name.lower().replace("_", " ")


def replay_lines(
    read: LogRead, *, show_rejections: bool = True, hand: int | None = None
) -> Iterator[str]:
    """The lines of the text replay of a log; only hand number ``hand`` when given."""
    names = [f"seat {i}" for i in range(4)]
    trick = 0
    showing = True
    for line in read.lines:
        ev = line.entry.event
        kind = ev.WhichOneof("kind")
        if kind == "hand_dealt":
            showing = hand is None or ev.hand_dealt.hand_number == hand
        if not showing and kind not in ("match_created", "match_ended"):
            continue
        if kind == "match_created":
            mc = ev.match_created
            names = [f"{i}:{n}" for i, n in enumerate(mc.config.seat_names)] or names
            rules = mc.config.rules
            yield f"Match {line.entry.match_id} ({rules.profile}, ends after {rules.match_end})"
            yield f"  seats: {', '.join(names)}"
            yield f"  seed commitment: {mc.seed_commitment}"
            yield f"  referee {mc.software_version}, protocol {mc.protocol_version}"
        elif kind == "seat_connected":
            sc = ev.seat_connected
            again = "reconnected" if sc.reconnect else "connected"
            yield f"  [{names[sc.seat]} {again}{f' ({sc.bot_name})' if sc.bot_name else ''}]"
        elif kind == "seat_disconnected":
            sd = ev.seat_disconnected
            yield f"  [{names[sd.seat]} disconnected: {sd.cause}]"
        elif kind == "referee_restarted":
            rr = ev.referee_restarted
            torn = f", {rr.torn_bytes} bytes of a torn line cut off" if rr.torn_bytes else ""
            yield f"  [the referee restarted ({rr.software_version}{torn}): every seat reconnects]"
        elif kind == "hand_dealt":
            hd = ev.hand_dealt
            trick = 1
            yield ""
            yield f"Hand {hd.hand_number}"
            for dealt in hd.hands:
                yield f"  {names[dealt.seat]:>12}: {' '.join(dealt.cards)}"
            must = f", must include {hd.must_include}" if hd.must_include else ""
            yield f"  {names[hd.leader]} leads{must}"
            yield f"  Trick {trick}"
        elif kind == "action_rejected" and show_rejections:
            rj = ev.action_rejected
            what = "pass" if getattr(rj, "pass") else " ".join(rj.cards) or "(nothing)"
            reason = common.RejectionReason.Name(rj.reason).removeprefix("REJECTION_REASON_")
            yield f"    {names[rj.seat]} tried {what}: rejected, {reason.lower()} ({rj.message})"
        elif kind == "played":
            pl = ev.played
            note = f"  [default: {_CAUSE[pl.default_cause]}]" if pl.default_cause else ""
            rev = "  [revolution]" if pl.revolution else ""
            yield (
                f"    {names[pl.seat]} plays {' '.join(pl.play.cards)} ({_combo(pl.play)}), "
                f"{pl.cards_left} left, {pl.elapsed_ms} ms{note}{rev}"
            )
        elif kind == "passed":
            ps = ev.passed
            note = f"  [default: {_CAUSE[ps.default_cause]}]" if ps.default_cause else ""
            forced = " (forced: lone 2)" if ps.forced_lead_pass else ""
            yield f"    {names[ps.seat]} passes{forced}, {ps.elapsed_ms} ms{note}"
        elif kind == "trick_cleared":
            trick += 1
            yield f"    -> {names[ev.trick_cleared.leader]} wins the trick"
            yield f"  Trick {trick}"
        elif kind == "hand_ended":
            he = ev.hand_ended
            yield f"  {names[he.winner]} goes out and wins hand {he.hand_number}"
            for left in he.hands:
                if left.seat != he.winner:
                    cards = " ".join(left.cards)
                    yield f"  {names[left.seat]:>12}: {len(left.cards):2d} left  {cards}"
            yield f"  scores {list(he.scores)}, totals {list(he.totals)}"
        elif kind == "match_ended":
            me = ev.match_ended
            status = common.MatchStatus.Name(me.status).removeprefix("MATCH_STATUS_").lower()
            yield ""
            yield f"Match {status}" + (f": {me.cancel_reason}" if me.cancel_reason else "")
            for st in me.standings:
                who = " + ".join(names[s] for s in st.seats)
                yield f"  {st.place}. {who}  total {st.total}, hands won {st.hands_won}"
            if any(me.strikes):
                yield f"  strikes: {list(me.strikes)}"
            yield f"  seed: {me.seed}"
    if not read.complete:
        yield ""
        yield f"({read.status()})"
