"""What the tournament prints: the ratings table, head to head, the verify command."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from referee.rules import Scoring
from referee.tournament.ratings import Standings
from referee.tournament.report import format_pairwise, format_standings, verify_command

from .test_ratings import result


def standings(bots: list[str], groups: int) -> Standings:
    """``groups`` one-match groups in which the bots finish in list order (0, 1, 2, 3
    points), the first four of ``bots`` rotating through the tables."""
    st = Standings(bots, Scoring.PENALTY, {g: 1 for g in range(groups)})
    for g in range(groups):
        table = [bots[(g + k) % len(bots)] for k in range(4)]
        order = sorted(table, key=bots.index)
        st.add(result(g, g, table, [order.index(b) for b in table]))
    return st


def test_the_table_shows_the_sort_key_intervals_and_overlap_marks():
    st = standings(["a", "b", "c", "d"], 3)
    rows = st.table()
    text = format_standings(rows, "penalty")
    lines = text.splitlines()
    assert "sorted by mu - 3 sigma (mu-3σ)" in lines[0]
    assert "mu-3σ" in lines[1] and "95% interval" in lines[1]
    body = lines[3:7]
    assert [ln.split()[1] if ln[3] == " " else ln.split()[2] for ln in body] == list("abcd")
    # Three groups cannot separate four bots: every interval overlaps its neighbour's.
    assert all(r.overlaps_above for r in rows[1:]) and not rows[0].overlaps_above
    assert [ln[3] for ln in body] == [" ", "~", "~", "~"]
    assert lines[-1].startswith("~ its rating interval")
    assert f"[{rows[0].rating_low:.1f}, {rows[0].rating_high:.1f}]" in body[0]


def test_head_to_head_as_a_matrix_and_as_neighbours():
    bots = ["a", "b", "c", "d"]
    st = standings(bots, 8)
    text = format_pairwise(bots, st.pairwise(bots), "penalty")
    lines = text.splitlines()
    assert lines[2].split() == bots
    row_a = lines[3]
    # a beats b by 1 point per hand in every group: no spread, certain.
    assert row_a.split()[1] == "." and "+1.00±0.00 100% (8)" in row_a
    assert "-1.00±0.00 0% (8)" in lines[4]
    many = [f"bot{i}" for i in range(10)]
    wide = format_pairwise(many, Standings(many, Scoring.PENALTY, {}).pairwise(many), "chips")
    assert "chips per hand" in wide
    assert wide.splitlines()[2].split() == ["bot0", "vs", "bot1", "-"]
    assert len(wide.splitlines()) == 2 + 9


def test_the_verify_command_works_when_pasted(tmp_path):
    folder = tmp_path / "club night's results"
    folder.mkdir()
    command = verify_command("printf '%s\\n'", folder, Path("/"))
    out = subprocess.run(
        ["bash", "-c", command], cwd="/", capture_output=True, text=True, check=True
    )
    # printf's arguments: the words a pasted command gives referee (relative to "/").
    expected = ["verify", "--tournament", str(folder.relative_to("/"))]
    assert out.stdout.splitlines() == expected
    inside = verify_command("referee", folder, tmp_path)
    assert shlex.split(inside) == ["referee", "verify", "--tournament", folder.name]
