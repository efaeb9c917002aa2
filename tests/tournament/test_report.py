"""What the tournament prints: the ratings table, head to head, the verify command."""

from __future__ import annotations

import html
import json
import shlex
import subprocess
from pathlib import Path

from referee.rules import Scoring
from referee.tournament.ratings import SORT_KEY, Standings, rank_notes, rank_notes_json
from referee.tournament.report import (
    format_pairwise,
    format_rank_notes,
    format_standings,
    verify_command,
)
from referee.view.index import tournament_body

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


def test_a_tournament_report_reads_line_by_line(tmp_path):
    """The report a real run prints: every line break is a line break (the tables once
    went through the terminal escaper whole and came out as one line with literal
    ``\\x0a``s), the ratings table has a row per bot, the matrix a row per bot."""
    from .conftest import bot_entry, write_config
    from .test_resume import referee

    bots = ["greedy", "random", "greedy-2", "random-2"]
    path = write_config(
        tmp_path,
        [bot_entry(name, builtin=name.split("-")[0]) for name in bots],
        tournament={"rounds": 1, "concurrency": 2},
        rules={"hands": 1},
    )
    done = referee("tournament", str(path))
    assert done.returncode == 0, done.stderr + done.stdout
    assert "\\x0a" not in done.stdout and "\\x" not in done.stdout
    lines = done.stdout.splitlines()
    top = next(i for i, ln in enumerate(lines) if ln.startswith("Ratings: OpenSkill"))
    assert "mu-3σ" in lines[top + 1] and set(lines[top + 2]) == {"-"}
    rows = lines[top + 3 : top + 7]
    assert [int(row.split()[0]) for row in rows] == [1, 2, 3, 4]
    assert sorted(next(w for w in row.split()[1:] if w != "~") for row in rows) == sorted(bots)
    head = next(i for i, ln in enumerate(lines) if ln.startswith("Head to head:"))
    assert lines[head + 1].startswith("mean ± 95% CI")
    names = lines[head + 2].split()
    assert sorted(names) == sorted(bots)
    matrix = lines[head + 3 : head + 7]
    assert [row.split()[0] for row in matrix] == names
    for row in matrix:  # "." on the diagonal, a cell "mean ... (groups)" per opponent
        assert row.split()[1:].count(".") == 1 and row.count("(") == 3, row
    assert any(ln.startswith("4/4 matches recorded (0 failed)") for ln in lines), done.stdout


def placer_and_scorer() -> Standings:
    """16 one-match groups: ``placer`` finishes first 12 times, by a point, ``scorer``
    the other 4, by 39: the table (finishing places) ranks placer first, the head to head
    (points on the same deals) favours scorer, likelihood of superiority 97%."""
    bots = ["placer", "scorer", "c", "d"]
    st = Standings(bots, Scoring.PENALTY, {g: 1 for g in range(16)})
    for g in range(16):
        st.add(result(g, g, bots, [0, 1, 70, 80] if g % 4 else [39, 0, 70, 80]))
    return st


def test_a_bot_ranked_above_one_that_beat_it_head_to_head_is_noted_with_the_sort_key():
    """Issue 31, item 9: the report and the page say when the table's order and the
    head to head disagree (likelihood of superiority 95% or more, or an interval above
    0), with the sort key in one line."""
    st = placer_and_scorer()
    rows = st.table()
    pairs = st.pairwise([r.name for r in rows])
    assert [r.name for r in rows[:2]] == ["placer", "scorer"]
    (note,) = rank_notes(rows, pairs)
    assert (note.above.name, note.below.name, note.pair.a) == ("placer", "scorer", "scorer")
    assert note.pair.los >= 0.95 and note.pair.ci95_low < 0  # the likelihood alone decides
    text = format_rank_notes(rows, pairs, "penalty").splitlines()
    assert text[0] == "Note: the table's order and the head to head disagree. " + SORT_KEY
    assert text[1] == (
        "  placer (#1) is ranked above scorer (#2), yet scorer did better on the same deals: "
        "by 9.00 penalty points a hand (95% CI -0.53 to +18.53, likelihood of superiority "
        "97%, 16 deal groups)"
    )
    assert "mu - 3 sigma" in SORT_KEY and "places" in SORT_KEY and "\n" not in SORT_KEY
    # The page shows the same, from standings.json.
    doc = {
        "bots": [r.to_json() for r in rows],
        "pairwise": [p.to_json() for p in pairs],
        "scoring": "penalty",
        **rank_notes_json(rows, pairs, "penalty"),
    }
    page = tournament_body("t", json.loads(json.dumps(doc)), [], [])
    assert '<div class="rank-notes" role="note">' in page
    assert html.escape(SORT_KEY, quote=True) in page
    assert html.escape(note.text("penalty"), quote=True) in page


def test_no_note_where_the_table_and_the_head_to_head_agree():
    st = standings(["a", "b", "c", "d"], 8)  # a beats b beats c beats d, every time
    rows = st.table()
    pairs = st.pairwise([r.name for r in rows])
    assert rank_notes(rows, pairs) == [] and format_rank_notes(rows, pairs, "penalty") == ""
    doc = {"bots": [r.to_json() for r in rows], **rank_notes_json(rows, pairs, "penalty")}
    assert "rank-notes" not in tournament_body("t", doc, [], [])
