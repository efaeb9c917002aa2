"""Each enum's names are written once (referee/protocol/names.py): what the readers show
follows the proto, and the few tables that remain are held to it."""

from __future__ import annotations

import dataclasses

from referee.cli.organiser import ORGANISER_STATUSES
from referee.log.summary import SeatSummary
from referee.protocol import common
from referee.protocol.names import CAUSE_PHRASES, DEFAULT_CAUSE, MATCH_STATUS, REJECTION_REASON
from referee.server.metrics import DEFAULT_CAUSES, REJECTION_REASONS


def test_every_value_of_the_proto_has_its_name_and_nothing_else_does():
    assert DEFAULT_CAUSE.names == {
        n: name.removeprefix("DEFAULT_CAUSE_").lower()
        for name, n in common.DefaultCause.items()
        if n
    }
    assert set(CAUSE_PHRASES) == set(DEFAULT_CAUSE.names.values())
    assert tuple(MATCH_STATUS.names.values()) == ORGANISER_STATUSES
    assert DEFAULT_CAUSES is DEFAULT_CAUSE.names and REJECTION_REASONS is REJECTION_REASON.names
    for number, name in MATCH_STATUS.names.items():
        assert MATCH_STATUS.from_text(name) == number
        assert MATCH_STATUS.number(common.MatchStatus.Name(number)) == number


def test_every_default_cause_is_counted_in_a_summary():
    from referee.log.summary import _CAUSES

    fields = {f.name for f in dataclasses.fields(SeatSummary)}
    assert set(_CAUSES) == set(DEFAULT_CAUSE.names) and set(_CAUSES.values()) <= fields
