"""Retiring a version, on each engine: the organiser's ``referee ladder retire``. A
retired version leaves the queue and the leaderboard, and keeps its reason and matches;
a second retirement, a missing team, bot or version, and a hostile reason are refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.cli import main
from referee.ladder import views
from referee.ladder.schema import MatchState, VersionState
from referee.ladder.store import LadderStore

from .helpers import active_version, finished

ROTATIONS = [(0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)]
TEAMS = "abcd"


class Ladder:
    """Four teams with an active version each, a ranked group queued of which one match
    was played: the state a version is retired from."""

    def __init__(self, store: LadderStore) -> None:
        self.store = store
        self.keys = {t: store.create_team(t).key for t in TEAMS}
        self.ids = {t: active_version(store, t, "bot").id for t in TEAMS}
        self.matches = store.schedule([self.ids[t] for t in TEAMS], ROTATIONS)
        claim = store.claim("w", 60)
        assert claim is not None
        store.record(claim.match_id, claim.token, finished(match_id=claim.match_id))
        self.played = claim.match_id

    def queued_of(self, team: str) -> list[str]:
        return [
            e.match_id
            for e in views.queue(self.store)
            if e.state == MatchState.SCHEDULED and self.ids[team] in e.version_ids
        ]

    def assert_retired_keeping_its_history(self, team: str, reason: str) -> None:
        v = self.store.version(self.ids[team])
        assert v.state is VersionState.RETIRED and v.reason == reason
        assert v.matches == 1  # the match it played is still counted
        assert self.queued_of(team) == []
        board = {r.version_id for r in views.leaderboard(self.store)}
        assert self.ids[team] not in board and len(board) == 3
        assert views.check(self.store) == []


@pytest.fixture
def ladder(store: LadderStore) -> Ladder:
    made = Ladder(store)
    assert len(made.queued_of("a")) == 3
    return made


# -- the organiser ---------------------------------------------------------------------


def test_the_organiser_retires_a_bots_active_version(
    ladder: Ladder, migrated_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "ladder.toml"
    config.write_text(f'[ladder]\nfolder = "data"\ndatabase = "{migrated_url}"\n')

    def retire(*args: str) -> tuple[int, str, str]:
        code = main(["ladder", "retire", str(config), *args])
        out, err = capsys.readouterr()
        return code, out, err

    code, out, _ = retire("a", "bot", "--reason", "broke the rules")
    assert code == 0 and out.startswith("a/bot#1: retired (broke the rules)")
    ladder.assert_retired_keeping_its_history("a", "broke the rules")

    code, _, err = retire("b", "bot")  # the default reason
    assert code == 0
    assert ladder.store.version(ladder.ids["b"]).reason == "retired by the ladder's organiser"

    for args, why in (
        (("a", "bot"), "a/bot has no active version"),
        (("a", "bot", "--version", "1"), "a/bot#1 is retired: only an active version"),
        (("c", "bot", "--version", "7"), "c/bot has no version 7"),
        (("c", "nobot"), "team 'c' has no bot 'nobot'"),
        (("zz", "bot"), "no team 'zz'"),
        (("../x", "bot"), "a team name is 1 to 40"),
        (("c", "bot", "--reason", "x" * 301), "at most 300 characters"),
        (("c", "bot", "--reason", "two\nlines"), "one line of printable text"),
    ):
        code, out, err = retire(*args)
        assert (code, out) == (2, ""), args
        assert err.startswith("referee ladder retire: ") and why in err, (args, err)
        assert "Traceback" not in err
    assert ladder.store.version(ladder.ids["c"]).state is VersionState.ACTIVE

    greedy = ladder.store.builtin_version("greedy")
    code, _, err = retire("house", "greedy")
    assert code == 2 and "house bot" in err
    assert ladder.store.version(greedy.id).state is VersionState.ACTIVE
