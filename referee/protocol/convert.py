"""Translation between rules-engine values and protocol messages, in one place."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from google.protobuf.timestamp_pb2 import Timestamp

from referee.protocol import common
from referee.rules import Kind, Reason, Rules, Standing, SuitOrder, sorted_cards
from referee.rules.cards import card_text

KIND_TO_PB: dict[Kind, common.Combination.ValueType] = {
    Kind.SINGLE: common.COMBINATION_SINGLE,
    Kind.PAIR: common.COMBINATION_PAIR,
    Kind.TRIPLE: common.COMBINATION_TRIPLE,
    Kind.STRAIGHT: common.COMBINATION_STRAIGHT,
    Kind.FLUSH: common.COMBINATION_FLUSH,
    Kind.FULL_HOUSE: common.COMBINATION_FULL_HOUSE,
    Kind.FOUR_OF_A_KIND: common.COMBINATION_FOUR_OF_A_KIND,
    Kind.STRAIGHT_FLUSH: common.COMBINATION_STRAIGHT_FLUSH,
}
PB_TO_KIND = {v: k for k, v in KIND_TO_PB.items()}

REASON_TO_PB: dict[Reason, common.RejectionReason.ValueType] = {
    r: common.RejectionReason.Value("REJECTION_REASON_" + r.value.upper()) for r in Reason
}
PB_TO_REASON = {v: k for k, v in REASON_TO_PB.items()}


def _rank_texts(order: SuitOrder) -> list[list[tuple[str, ...]]]:
    """For each rank and each set of its four suits (a 4-bit nibble of a mask), the
    cards' text in card order: a mask is read a rank at a time, with no sort."""
    return [
        [
            tuple(card_text(c) for c in sorted_cards(nibble << (4 * rank), order))
            for nibble in range(16)
        ]
        for rank in range(13)
    ]


_RANK_TEXTS = {order: _rank_texts(order) for order in SuitOrder}


def card_list(mask: int, order: SuitOrder) -> list[str]:
    """Cards of a mask as canonical text, ascending in card order."""
    by_rank = _RANK_TEXTS[order]
    out: list[str] = []
    rank = 0
    while mask:
        skip = ((mask & -mask).bit_length() - 1) >> 2  # ranks with no card
        mask >>= 4 * skip
        rank += skip
        out += by_rank[rank][mask & 15]
        mask >>= 4
        rank += 1
    return out


_PLAY_TEXTS: dict[SuitOrder, dict[int, list[str]]] = {order: {} for order in SuitOrder}
_MAX_PLAY_TEXTS = 50_000
"""Bound on the remembered plays per suit order (a few MB; cleared when full)."""


def play_cards(mask: int, order: SuitOrder) -> list[str]:
    """``card_list`` of a play (at most five cards), remembered: a hand's legal plays come
    back in every prompt of the hand. The list is shared: never modify it."""
    known = _PLAY_TEXTS[order]
    text = known.get(mask)
    if text is None:
        if len(known) >= _MAX_PLAY_TEXTS:
            known.clear()
        text = known[mask] = card_list(mask, order)
    return text


def fill_play(out: common.Play, mask: int, kind: Kind | None, order: SuitOrder) -> None:
    """Write a play's cards and combination into ``out`` (a field of the message being
    built, so that no Play is built and copied in)."""
    out.cards.extend(card_list(mask, order))
    if kind is not None:
        out.combination = KIND_TO_PB[kind]


def rules_pb(rules: Rules) -> common.Rules:
    opts = rules.options()
    return common.Rules(profile=rules.profile, **opts)


def rules_from_pb(msg: common.Rules) -> Rules:
    """The Rules value a logged Rules message describes."""
    fields = {f.name: getattr(msg, f.name) for f in msg.DESCRIPTOR.fields if f.name != "profile"}
    return Rules.for_profile(msg.profile, fields)


def standings_pb(standings: Sequence[Standing]) -> list[common.Standing]:
    return [
        common.Standing(place=s.place, seats=list(s.seats), total=s.total, hands_won=s.hands_won)
        for s in standings
    ]


def seat_cards(hands: Iterable[int], order: SuitOrder) -> list[common.SeatCards]:
    return [
        common.SeatCards(seat=s, cards=card_list(h, order), count=h.bit_count())
        for s, h in enumerate(hands)
    ]


def ts_us(ts: Timestamp) -> int:
    """Microseconds of a protobuf Timestamp (the log's and the machine's time unit)."""
    return ts.seconds * 1_000_000 + ts.nanos // 1000


def set_ts(ts: Timestamp, us: int) -> None:
    """Set a protobuf Timestamp to ``us`` microseconds."""
    ts.seconds, rest = divmod(us, 1_000_000)
    ts.nanos = rest * 1000
