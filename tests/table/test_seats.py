"""A match's four seats from its bots' texts and names (``referee match --bot --name``)."""

from __future__ import annotations

import pytest

from referee.table.bots import BuiltinBot, CommandBot, match_seats


def test_names_given_are_kept_and_the_others_made_distinct_from_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where a command's program is looked for
    (tmp_path / "mybot.py").write_text("")
    seats = match_seats(
        [("greedy", None), ("greedy", None), ("random", "greedy"), ("{python} mybot.py", None)]
    )
    assert [s.name for s in seats] == ["greedy-1", "greedy-2", "greedy", "mybot"]
    assert seats[2].bot == BuiltinBot("random")
    assert isinstance(seats[3].bot, CommandBot)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ([("greedy", None)] * 3, "give 4 bots (--bot 4 times), got 3"),
        (
            [("greedy", "a"), ("random", "a"), ("greedy", None), ("random", None)],
            "--name: two seats are named 'a'",
        ),
        ([("./no-such-bot", None)] + [("greedy", None)] * 3, "cannot start bot './no-such-bot'"),
        ([("greedy", "x" * 41)] + [("greedy", None)] * 3, "--name: "),
    ],
)
def test_seats_that_cannot_be_played_are_refused_with_a_message(given, message):
    with pytest.raises(ValueError) as info:
        match_seats(given)
    assert str(info.value).startswith(message)
