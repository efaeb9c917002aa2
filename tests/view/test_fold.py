"""The viewer's data: what the fold makes of real and of hostile logs, and the embedding."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from referee.log.reader import MAX_LOG_BYTES, LogTooLarge
from referee.rules import Rules, context_for, parse_cards
from referee.view.fold import Folder, fold_log
from referee.view.page import embed_json, render_page
from referee.view.seat_replay import seat_lines, terminal_text

from .conftest import PROFILES, ROOT, entries, moment


def referee(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_each_move_carries_its_legal_plays_and_the_choice_is_one(match_logs, profile):
    folded = fold_log(match_logs[profile])
    rules = Rules.for_profile(profile)
    held: list[list[str]] = []
    moves = 0
    for op in folded.ops:
        if op["t"] == "deal":
            held = [list(h) for h in op["cards"]]
        elif op["t"] == "move":
            moves += 1
            legal = op["legal"]
            assert legal is not None and "illegal" not in op
            cards = held[op["seat"]]
            plays = {
                frozenset(c for i, c in enumerate(cards) if bits >> i & 1)
                for group in legal["plays"].values()
                for bits in group
            }
            if op.get("pass"):
                assert legal["pass"]
            else:
                assert frozenset(op["cards"]) in plays
                held[op["seat"]] = [c for c in cards if c not in op["cards"]]
                assert op["label"].startswith(op["kind"].replace("_", " "))
            # Every listed play is made of the seat's cards and forms a combination.
            ctx = context_for(rules)
            assert all(ctx.classify(parse_cards(list(play))) for play in plays)
    assert moves > 20
    end = next(op for op in folded.ops if op["t"] == "end")
    assert end["status"] == "finished" and end["seed_ok"] is True


def test_public_events_fold_without_cards_or_legal_plays(match_logs):
    """What the live page gets: a spectator's events (no deal, no rejections)."""
    folder = Folder("m")
    for i, entry in enumerate(entries(match_logs["big-two"]), start=1):
        event = entry["event"]
        if "action_rejected" in event:
            continue
        if "hand_dealt" in event:
            for sc in event["hand_dealt"]["hands"]:
                sc.pop("cards")
        op = folder.feed(i, event)
        if op["t"] == "deal":
            assert op["cards"] is None and op["counts"] == [13, 13, 13, 13]
        if op["t"] == "move":
            assert op["legal"] is None


def test_a_lenient_fold_of_a_strange_log(tmp_path):
    lines = [
        '{"match_id":"m","seq":"1","event":{"match_created":{"config":{"rules":'
        '{"profile":"big-two","match_end":"hands 1","shiny_new_option":true}}}}}',
        '{"match_id":"m","seq":"2","command":{"kind":"x"},"event":{"future_event":{"at":1}}}',
        "not json at all",
        '{"seq":"4","event":{"played":{"seat":9}}}',
        '{"seq":"5","event":{"turn_started":{"seat":1}},"event2":{}}',
        '{"seq":"6","event":{"hand_dealt":{"hand_number":1,"hands":[{"cards":["3D"]}]}}}',
        '{"seq":"7","event":{"played":{"seat":1,"play":{"cards":["ZZ","'
        + "x" * 100
        + '"],"combination":99}}}}',
        '{"seq":"8","event":{"passed":{"seat":2,"elapsed_ms":NaN}}}',
        "[" * 100_000 + "]" * 100_000,
        '{"seq":"10","event":{}}',
        '{"seq":"11","event":{"match_ended":{"seed":"s","standings":[{"seats":[7]}]}}}',
        '{"seq":"12","event":{"played"',
    ]
    log = tmp_path / "strange.jsonl"
    log.write_text("\n".join(lines), encoding="utf-8")
    folded = fold_log(log)
    kinds = [op["t"] for op in folded.ops]
    assert kinds == [
        "match",
        "other",
        "bad",
        "other",
        "turn",
        "deal",
        "move",
        "bad",
        "bad",
        "bad",
        "end",
        "bad",
    ]
    assert folded.ops[0]["rules"]["shiny_new_option"] is True  # shown as logged
    assert folded.ops[1]["kind"] == "future_event"
    assert folded.ops[5]["cards"] is None  # only one seat's cards: not a deal to show
    move = folded.ops[6]
    assert move["legal"] is None and len(move["cards"][1]) == 16
    assert folded.ops[10]["seed_ok"] is False and folded.ops[10]["standings"][0]["seats"] == [0]
    assert folded.truncated
    # Whatever the log holds, the page data is valid JSON and inert.
    page = render_page({"ops": folded.ops}, "t")
    assert page.count("<script") == 2


def test_embedded_json_cannot_close_its_element():
    hostile = {"s": "</script><script>alert(1)</script><!-- \u2028\u2029 & > {{JS}}"}
    text = embed_json(hostile)
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in text
    assert json.loads(text) == hostile
    page = render_page({"ops": [], "x": hostile}, "</title><script>")
    assert page.count("</script>") == 2
    assert "<title>&lt;/title&gt;&lt;script&gt;</title>" in page


def test_view_refuses_a_log_over_the_limit_clearly(tmp_path):
    big = tmp_path / "huge.jsonl"
    with open(big, "wb") as f:
        f.truncate(MAX_LOG_BYTES + 1)  # sparse: nothing written
    with pytest.raises(LogTooLarge, match=r"65\.0 MB"):
        fold_log(big)
    done = referee("view", str(big))
    assert done.returncode == 2
    assert "65.0 MB" in done.stderr and "65 MB at most" in done.stderr
    # `referee replay` and `referee replay --seat` open the same files, with the same limit.
    for seat in ((), ("--seat", "0")):
        replay = referee("replay", str(big), *seat)
        assert replay.returncode == 1 and "65 MB at most" in replay.stderr
    assert not big.with_suffix(".html").exists()
    missing = referee("view", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "nope.jsonl" in missing.stderr


def test_seat_replay_text_shows_only_what_the_seat_knew(match_logs):
    log_path = match_logs["pusoy-dos"]
    log = entries(log_path)
    done = referee("replay", str(log_path), "--seat", "2", "--hand", "1")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Hand 1" in out and "Hand 2" not in out
    assert "legal play" in out and "Your turn" in out
    dealt = moment(log, 1, 0).held
    body = out.split("Hand 1", 1)[1].split("goes out and wins", 1)[0]
    # Before the hand ends no card of another seat is printed, except as it is played.
    played = {
        c for e in log if "played" in e["event"] for c in e["event"]["played"]["play"]["cards"]
    }
    for seat in (0, 1, 3):
        for card in set(dealt[seat]) - played:
            assert f" {card}" not in body, card
    whole = referee("replay", str(log_path), "--hand", "2")
    assert whole.returncode == 0 and "Hand 2" in whole.stdout and "Hand 1\n" not in whole.stdout
    ops = fold_log(log_path).ops
    assert list(seat_lines(ops, 0, 99))[-1].startswith("  seed:")


def test_terminal_text_escapes_terminal_controls():
    # U+202E (right-to-left override) is shown as \u202e, not as \x20 followed by "2e".
    assert terminal_text("a\x1b[2Jb\u202ec\x00") == "a\\x1b[2Jb\\u202ec\\x00"


def test_view_cli_writes_next_to_the_log(match_logs, tmp_path):
    log = tmp_path / "m.jsonl"
    log.write_bytes(match_logs["big-two"].read_bytes())
    done = referee("view", str(log))
    assert done.returncode == 0, done.stderr
    page = tmp_path / "m.html"
    assert done.stdout.strip() == str(page) and page.stat().st_size < 400_000
    help_text = referee("view", "--help").stdout
    assert "example" in help_text and "#hand=3&move=41" in help_text


def test_view_of_a_tournament_folder(match_logs, tmp_path):
    folder = tmp_path / "night"
    (folder / "logs").mkdir(parents=True)
    results = []
    for i, log in enumerate(match_logs.values()):
        (folder / "logs" / f"t-{i}.jsonl").write_bytes(log.read_bytes())
        results.append(
            {
                "match_id": f"t-{i}",
                "index": i,
                "log": f"logs/t-{i}.jsonl",
                "status": "finished",
                "seats": [{"bot": f"<b>bot{s}</b>"} for s in range(4)],
            }
        )
    results.append({"match_id": "evil", "index": 9, "log": "../../../etc/passwd", "seats": []})
    results.append({"match_id": "failed", "index": 10, "log": "", "error": "<script>", "seats": []})
    (folder / "results.jsonl").write_text(
        "\n".join(json.dumps(r) for r in results) + "\n{cut", encoding="utf-8"
    )
    standings = {"tournament": "Night <1>", "bots": [{"rank": 1, "name": "<i>x</i>", "mu": 1.5}]}
    (folder / "standings.json").write_text(json.dumps(standings), encoding="utf-8")
    done = referee("view", str(folder))
    assert done.returncode == 0, done.stderr
    index = (folder / "view" / "index.html").read_text(encoding="utf-8")
    assert "<b>" not in index and "&lt;b&gt;bot0&lt;/b&gt;" in index
    assert "Night &lt;1&gt;" in index and "&lt;i&gt;x&lt;/i&gt;" in index
    # One script, the page's own (its filter); the error's markup is text.
    assert index.count("<script") == 1 and "&lt;script&gt;" in index
    assert "passwd" not in " ".join(os.listdir(folder / "view"))
    for i in range(3):
        assert f'href="t-{i}.html"' in index
        assert (folder / "view" / f"t-{i}.html").is_file()
    # A second run rebuilds nothing that did not change.
    before = (folder / "view" / "t-0.html").stat().st_mtime_ns
    assert referee("view", str(folder)).returncode == 0
    assert (folder / "view" / "t-0.html").stat().st_mtime_ns == before
    # With --with-stderr, the output files results.jsonl names are in the pages (an
    # output file without its sidecar is shown untimed); a path out of the folder is not.
    out = folder / "stderr" / "t-0" / "seat1-x.txt"
    out.parent.mkdir(parents=True)
    out.write_text("hello from seat one\n<script>alert(1)</script>\n", encoding="utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("do not show\n", encoding="utf-8")
    results[0]["seats"][1]["stderr"] = "stderr/t-0/seat1-x.txt"
    results[0]["seats"][2]["stderr"] = "../secret.txt"
    (folder / "results.jsonl").write_text(
        "\n".join(json.dumps(r) for r in results) + "\n", encoding="utf-8"
    )
    assert referee("view", "--with-stderr", str(folder)).returncode == 0
    page = (folder / "view" / "t-0.html").read_text(encoding="utf-8")
    assert (folder / "view" / "t-0.html").stat().st_mtime_ns != before  # rebuilt
    assert "hello from seat one" in page and "do not show" not in page
    assert "<script>alert" not in page and page.count("<script") == 2
    assert "hello from seat one" not in (folder / "view" / "t-1.html").read_text()
