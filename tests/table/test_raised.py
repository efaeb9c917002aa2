"""A spawned bot whose own code raises is named in ``referee match``'s summary, at its
move, as a crash is (issue 31, item 6): its kit plays the fallback for the turn and
writes the raised marker (docs/kits.md, section 5), which the table finds in the bot's
output and places with the log."""

from __future__ import annotations

import json
import re
from pathlib import Path

from referee_cli import run_referee

from referee.log.reader import read_log
from referee.table.output import raised_in

BOT = Path(__file__).resolve().parent / "bots" / "raising_bot.py"


def test_the_summary_names_the_move_at_which_the_bots_code_raised(tmp_path):
    done = run_referee(
        "match", "--hands", "1", "--seed", "raised", "--log-dir", str(tmp_path),
        "--bot", f"{{python}} {BOT}", "--bot", "greedy", "--bot", "random", "--bot", "greedy",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr  # the match was played
    (output,) = tmp_path.glob("*.seat0.stderr")
    (raised,) = raised_in(output)
    error = "ZeroDivisionError: integer division or modulo by zero"
    assert (raised.call, raised.error) == ("choose", error)
    # The move of that turn, counted as referee view counts them.
    log = read_log(next(tmp_path.glob("*.jsonl")))
    move, hand = 0, 0
    for line in log.lines:
        if line.kind == "hand_dealt":
            hand, move = line.entry.event.hand_dealt.hand_number, 0
        elif line.kind in ("played", "passed"):
            move += 1
            body = getattr(line.entry.event, line.kind)
            if body.turn_id == raised.turn:
                assert body.seat == 0 and not body.default_cause  # the kit's fallback
                break
    where = f"hand {hand}, move {move}"
    row = next(ln for ln in done.stdout.splitlines() if re.match(r"\s+\d\s+0\s+raising_bot", ln))
    assert row.rstrip().endswith(f"its code raised at {where}: ZeroDivisionError"), row
    said = f"seat 0 (raising_bot): the bot's code raised at {where}: {error}"
    assert said in done.stderr, done.stderr
    assert f"its kit played the fallback; its output: {output}" in done.stderr
    # The page's data places it at that move.
    page = tmp_path / "page.html"
    shown = run_referee("view", "--with-stderr", str(log.path), "-o", str(page))
    assert shown.returncode == 0, shown.stderr
    found = re.search(
        r'<script type="application/json" id="viewer-data">(.*?)</script>', page.read_text()
    )
    assert found is not None
    data = json.loads(found.group(1))
    ((seq, error),) = data["stderr"]["seats"][0]["raised"]
    (op,) = [o for o in data["ops"] if o.get("t") == "move" and o.get("seq") == seq]
    assert op["turn"] == raised.turn and error == raised.error


def test_a_tournament_records_it_in_the_seats_result_and_its_list_of_matches(tmp_path):
    (tmp_path / "t.toml").write_text(
        '[tournament]\nname = "t"\nseed = "raised"\nformat = "fixed"\nseatings = "none"\n'
        "[rules]\nhands = 1\n"
        f'[[bot]]\nname = "raising"\ncommand = "{{python}} {BOT}"\n'
        '[[bot]]\nname = "g"\nbuiltin = "greedy"\n[[bot]]\nname = "r"\nbuiltin = "random"\n'
        '[[bot]]\nname = "g2"\nbuiltin = "greedy"\n'
    )
    done = run_referee("tournament", "t.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = (tmp_path / "t-results" / "results.jsonl").read_text().splitlines()
    seat = next(s for s in json.loads(line)["seats"] if s["bot"] == "raising")
    assert seat["raised"] == 1
    assert re.fullmatch(r"hand 1, move \d+: ZeroDivisionError: integer .*", seat["raised_first"])
    assert run_referee("view", str(tmp_path / "t-results")).returncode == 0
    index = (tmp_path / "t-results" / "view" / "index.html").read_text()
    assert '<span class="badge crash">its code raised: raising</span>' in index
