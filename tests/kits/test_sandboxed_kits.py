"""Every kit's sample bot plays, unchanged, in a tournament's sandbox.

Two tables of four cover the six kits; each is a one-match tournament with the sandbox
required (skipped, saying what is missing, where it cannot work). The kits are built
once per session, shared with test_kits.py.
"""

from __future__ import annotations

import pytest

from referee.log.verify import verify_log
from referee.tournament.director import Tournament
from referee.tournament.toml_reader import load_config

from ..tournament.conftest import bot_entry, read_results, require_sandbox, write_config
from .conftest import ROOT, build

TABLES = [["python", "typescript", "go", "rust"], ["java", "cpp", "typescript", "python"]]


@pytest.mark.parametrize("langs", TABLES, ids=lambda langs: "-".join(langs))
async def test_kit_sample_bots_play_a_sandboxed_table(tmp_path, langs):
    require_sandbox()
    bots = [
        bot_entry(
            lang,
            command=f"{build(lang)} --address={{address}}",  # the token: PUSOY_TOKEN
            cwd=str(ROOT / "clients" / lang),
        )
        for lang in langs
    ]
    path = write_config(
        tmp_path,
        bots,
        tournament={"format": "fixed", "seatings": "none"},
        rules={"profile": "big-two", "hands": 2},
        time={"turn_time_ms": 5000, "connect_timeout_ms": 60000},
        more={"sandbox": {"enabled": True}},
    )
    tournament = Tournament(load_config(path))
    summary = await tournament.run()
    assert tournament.isolation.active
    folder = tmp_path / "out"
    stderr = "".join(p.read_text(errors="replace")[-1500:] for p in folder.glob("stderr/*/*"))
    assert (summary.done, summary.failed) == (1, 0), stderr
    (result,) = read_results(folder)
    assert result["status"] == "finished" and result["verified"] is True
    assert verify_log(folder / result["log"]).ok
    for seat in result["seats"]:
        assert seat["connected"], (seat["bot"], stderr)
        # Every seat played for itself, and no sandbox limit got in the way.
        assert (seat["timeouts"], seat["illegal_defaults"], seat["absent_turns"]) == (0, 0, 0)
        assert seat["breach"] == "" and seat["exit_code"] == 0, (seat, stderr)
        assert seat["cpu_s"] > 0 and seat["cpu_ms_per_turn"] is not None
