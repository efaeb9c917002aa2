"""The replay of an eventful match in a real browser, at 1280x720 and at phone width.

The match is played by ``referee match`` with real bot processes, each with its own
trouble (tests/view/bots/eventful_bot.py): one writes markup and script to its standard
error on every turn, one crashes with a traceback, one is rejected, runs into its time
bank and times out, one drops its stream and reconnects. The page is written by
``referee view --with-stderr``. What the timeline, the clocks and the crash must show is
computed here from the log's raw lines.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from referee.log.verify import verify_log

from .conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, entries, require_chromium, screenshot_path

BOT = ROOT / "tests" / "view" / "bots" / "eventful_bot.py"
TURN_MS = 500
BANK_MS = 500
HOSTILE_LINE = "<b>bold</b></script><script>window.__pwned=9</script>"


def referee(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=180,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def eventful(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the log, its page) of a two-hand match with every kind of trouble."""
    folder = tmp_path_factory.mktemp("eventful")
    bots: list[str] = []
    for mode, name in (
        ("chatty", "chatty"),
        ("crash", "crashy"),
        ("sleepy", "sleepy"),
        ("flaky", "flaky"),
    ):
        settings = "PUSOY_LATE_S=0.75 PUSOY_TIMEOUT_S=1.3 PUSOY_CRASH_AFTER=4"
        bots += ["--bot", f"{{python}} {BOT} {mode} {settings}", "--name", name]
    done = referee(
        "match",
        *("--log-dir", str(folder / "logs"), "--state-dir", str(folder / "state")),
        *("--hands", "2", "--seed", "eventful", "--profile", "pusoy-dos"),
        *("--turn-time-ms", str(TURN_MS), "--time-bank-ms", str(BANK_MS)),
        *bots,
    )
    assert done.returncode == 3, done.stdout + done.stderr  # a bot crashed
    assert " view --with-stderr " in done.stdout  # it tells how to see the bots' output
    log = Path(re.search(r"^Log: (.+)$", done.stdout, flags=re.M).group(1))  # type: ignore[union-attr]
    assert verify_log(log).ok
    page = folder / "page.html"
    shown = referee("view", "--with-stderr", str(log), "-o", str(page))
    assert shown.returncode == 0, shown.stderr
    return log, page


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require_chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def open_page(browser: Any, url: str, width: int, height: int) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url)
    page.wait_for_selector("html[data-ready='1']")
    return page, errors


def go(page: Any, fragment: str) -> None:
    page.evaluate("f => { location.hash = f; }", fragment)
    page.wait_for_selector(f"#table[data-pos='{fragment}']", state="attached")


# -- the log, read independently of the viewer -------------------------------------------


def moments(log: list[dict[str, Any]]) -> list[tuple[int, int, int]]:
    """(line, hand number, moves of that hand before it) of every entry; before the first
    deal, hand 0."""
    out = []
    hand, done = 0, 0
    for line, entry in enumerate(log, start=1):
        ((kind, p),) = entry["event"].items()
        if kind == "hand_dealt":
            hand, done = int(p["hand_number"]), 0
        out.append((line, hand, done))
        if kind in ("played", "passed"):
            done += 1
    return out


def expected_marks(log: list[dict[str, Any]]) -> set[tuple[str, int]]:
    """(kind, position) of every mark the timeline must show, the position counted as the
    page does: each hand has its moves + 1 moments."""
    where = moments(log)
    sizes: dict[int, int] = {}
    for (_, hand, done), entry in zip(where, log, strict=True):
        if next(iter(entry["event"])) in ("played", "passed"):
            sizes[hand] = done + 1
    sizes = {h: sizes.get(h, 0) for h in sorted({h for _, h, _ in where if h})}
    base = {}
    total = 0
    for h, n in sizes.items():
        base[h] = total
        total += n + 1
    marks: set[tuple[str, int]] = set()
    for i, ((_, hand, done), entry) in enumerate(zip(where, log, strict=True)):
        ((kind, p),) = entry["event"].items()
        pos = base.get(hand, 0) + done
        if kind == "seat_disconnected":
            marks.add(("crash" if p.get("gone") else "disconnect", pos))
        elif kind in ("played", "passed") and p.get("default_cause") == "DEFAULT_CAUSE_TIMEOUT":
            marks.add(("timeout", pos + 1))
        elif kind == "hand_ended":
            marks.add(("hand", pos))
        elif kind == "action_rejected":
            nxt = next(
                (
                    e["event"][k]
                    for e in log[i + 1 :]
                    for k in e["event"]
                    if k in ("played", "passed", "hand_ended")
                ),
                {},
            )
            attempt = (
                not p.get("late")
                and "turn_id" in nxt
                and int(nxt.get("seat", 0)) == int(p.get("seat", 0))
                and nxt["turn_id"] == p.get("turn_id")
            )
            marks.add(("reject", pos + 1 if attempt else pos))
    return marks


def position_of(fragment_hand: int, move: int, log: list[dict[str, Any]]) -> int:
    sizes: dict[int, int] = {}
    for _, hand, done in moments(log):
        sizes[hand] = max(sizes.get(hand, 0), done)
    pos = 0
    for h in sorted(x for x in sizes if x):
        if h == fragment_hand:
            return pos + move
        pos += sizes[h] + 1
    raise AssertionError(fragment_hand)


def last_prompt_of_its_moment(log: list[dict[str, Any]], i: int) -> bool:
    """Whether the prompt on line i + 1 is the last one before the next move (a seat that
    reconnects is prompted again)."""
    for entry in log[i + 1 :]:
        kind = next(iter(entry["event"]))
        if kind in ("played", "passed", "hand_ended"):
            return True
        if kind == "turn_started":
            return False
    return True


def inside(box: dict[str, float] | None, width: int, height: int) -> bool:
    return (
        box is not None
        and box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= width + 0.5
        and box["y"] + box["height"] <= height + 0.5
    )


# -- the tests ---------------------------------------------------------------------------


def test_the_timeline_marks_what_the_log_says(browser, eventful):
    log_path, page_path = eventful
    log = entries(log_path)
    want = expected_marks(log)
    kinds = {k for k, _ in want}
    assert kinds == {"hand", "crash", "timeout", "reject", "disconnect"}, kinds
    page, errors = open_page(browser, page_path.as_uri(), 1280, 720)
    try:
        shown = page.eval_on_selector_all(
            "#timeline .mark", "els => els.map(e => [e.dataset.kind, Number(e.dataset.pos)])"
        )
        assert {(k, p) for k, p in shown} == want
        keys = page.eval_on_selector_all("#timeline-key li", "els => els.map(e => e.dataset.kind)")
        assert set(keys) == kinds
        # A mark takes you to its moment: the crash shows why the seat is gone, there.
        crash_pos = next(p for k, p in want if k == "crash")
        page.click(f"#timeline .mark[data-kind='crash'][data-pos='{crash_pos}']")
        assert page.input_value("#scrubber") == str(crash_pos)
        gone = page.locator(".seat.gone")
        assert gone.count() == 1 and gone.get_attribute("data-seat") == "1"
        why = gone.locator(".why").inner_text()
        assert why == "its bot exited with status 1"
        assert "crashed" in gone.locator(".badge.crash").inner_text()
        page.keyboard.press("ArrowLeft")  # a moment before it: still playing
        assert page.locator(".seat.gone").count() == 0
        assert not errors, errors
    finally:
        page.close()


def test_board_controls_and_moves_fit_one_screen(browser, eventful):
    log_path, page_path = eventful
    log = entries(log_path)
    page, errors = open_page(browser, page_path.as_uri(), 1280, 720)
    try:
        crash_pos = next(p for k, p in expected_marks(log) if k == "crash")
        for fragment in ("#hand=1&move=0", "#hand=1&move=9", "#hand=2&move=12"):
            go(page, fragment)
            for sel in (
                "#table",
                "#controls",
                "#timeline",
                "#next",
                "#scrubber",
                ".moves-panel",
                "#turn",
            ):
                assert inside(page.locator(sel).bounding_box(), 1280, 720), (fragment, sel)
            table = page.locator("#table").bounding_box()
            moves = page.locator(".moves-panel").bounding_box()
            assert moves["x"] >= table["x"] + table["width"], "the moves beside the board"
            # One move number for one moment: the position line and this move's panel.
            move = int(fragment.rsplit("=", 1)[1])
            position = page.inner_text("#position")
            if move:
                assert f"move {move} of " in position
                assert page.inner_text("#turn .move-no").startswith(f"Move {move} of ")
                assert page.locator("#moves .play.latest .num").inner_text() == str(move)
            else:
                assert "dealt" in position and page.locator("#turn .move-no").count() == 0
        page.evaluate(
            "p => { const s = document.getElementById('scrubber'); s.value = p; "
            "s.dispatchEvent(new Event('input')); }",
            str(crash_pos + 1),
        )
        page.screenshot(path=str(screenshot_path("replay-1280x720.png")))
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        # A phone: one column, nothing wider than the screen, the stepping controls at hand.
        page.set_viewport_size({"width": 390, "height": 844})
        go(page, "#hand=1&move=9")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        for sel in ("#table", "#next", "#scrubber"):
            box = page.locator(sel).bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, sel
        assert inside(page.locator("#next").bounding_box(), 390, 844)
        page.screenshot(path=str(screenshot_path("replay-phone.png")))
        page.mouse.wheel(0, 900)  # scrolled down the list: the controls are still there
        page.wait_for_timeout(150)
        assert inside(page.locator("#next").bounding_box(), 390, 844)
        page.click("#next")
        assert page.get_attribute("#table", "data-move") == "10"
        assert not errors, errors
    finally:
        page.close()


def test_each_seats_clock_as_the_log_implies_it(browser, eventful):
    log_path, page_path = eventful
    log = entries(log_path)
    where = moments(log)
    page, errors = open_page(browser, page_path.as_uri(), 1280, 720)
    try:
        checked = banked = 0
        for i, entry in enumerate(log):
            turn = entry["event"].get("turn_started")
            if turn is None or not last_prompt_of_its_moment(log, i):
                continue
            _, hand, done = where[i]
            seat = int(turn.get("seat", 0))
            # The moment the prompt was given: the next seat to act, its turn and bank.
            go(page, f"#hand={hand}&move={done}")
            assert page.get_attribute("#table", "data-to-act") == str(seat)
            clock = page.locator("#clock")
            assert clock.get_attribute("data-turn-ms") == str(TURN_MS)
            assert clock.get_attribute("data-bank") == str(int(turn.get("time_bank_ms", 0)))
            box = page.locator(f".seat[data-seat='{seat}'] .bank")
            assert box.get_attribute("data-bank") == str(int(turn.get("time_bank_ms", 0)))
            checked += 1
            if checked >= 16:
                break
        assert checked >= 16
        # A move that ran into its bank says so, and the bank left is the next prompt's.
        for i, entry in enumerate(log):
            move = entry["event"].get("played") or entry["event"].get("passed")
            if (
                move is None
                or move.get("default_cause")
                or int(move.get("elapsed_ms", 0)) <= TURN_MS
            ):
                continue
            seat = int(move.get("seat", 0))
            after = next(
                e["event"]["turn_started"]
                for e in log[i + 1 :]
                if "turn_started" in e["event"]
                and int(e["event"]["turn_started"].get("seat", 0)) == seat
            )
            _, hand, done = where[i]
            go(page, f"#hand={hand}&move={done + 1}")
            line = page.inner_text("#turn .clock-line")
            assert f"of its {TURN_MS} ms turn + " in line and "bank left" in line, line
            shown = int(page.get_attribute(f".seat[data-seat='{seat}'] .bank", "data-bank") or -1)
            assert abs(shown - int(after.get("time_bank_ms", 0))) <= 2, (shown, after)
            banked += 1
        assert banked >= 1
        assert not errors, errors
    finally:
        page.close()


def test_each_bots_output_beside_its_moves_and_only_as_text(browser, eventful):
    log_path, page_path = eventful
    html = page_path.read_text(encoding="utf-8")
    assert html.count("<script") == 2 and html.count("</script>") == 2  # its own two
    log = entries(log_path)
    page, errors = open_page(browser, page_path.as_uri(), 1280, 720)
    try:
        # The chatty seat's lines are at its moves, as text.
        chatty = [
            i
            for i, e in enumerate(log)
            if int(
                (e["event"].get("played") or e["event"].get("passed") or {"seat": -1}).get(
                    "seat", 0
                )
            )
            == 0
            and ("played" in e["event"] or "passed" in e["event"])
        ]
        where = moments(log)
        # A line is shown at the move logged when it arrived: printed just before its
        # move, it arrives with that move or, on a loaded machine, a few moves later, but
        # by the seat's next move at the latest (its next lines are printed after it).
        _, hand, done = where[chatty[2]]
        last = next((where[i][2] for i in chatty[3:] if where[i][1] == hand), done + 4)
        lines = []
        for move in range(done + 1, last + 2):
            go(page, f"#hand={hand}&move={move}")
            lines += page.eval_on_selector_all(
                "#turn .output .text", "els => els.map(e => e.textContent)"
            )
            if HOSTILE_LINE in lines:
                break
        assert HOSTILE_LINE in lines and any(
            re.fullmatch(r"prompt \d+: \d+ plays", x) for x in lines
        )
        assert page.locator("#moves .said").count() >= 1
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#turn .output b, #moves b, #output b").count() == 0

        # The crashed seat's traceback is at the default moves the referee then made for
        # it: its stream may close before the traceback is printed, but the table reads
        # a dead bot's last output before it reports the bot gone, so the traceback has
        # arrived by the seat's first move after that report.
        def seat1_default(e: dict[str, Any]) -> bool:
            move = e["event"].get("passed") or e["event"].get("played") or {}
            cause = move.get("default_cause")
            return cause == "DEFAULT_CAUSE_DISCONNECTED" and int(move.get("seat", 0)) == 1

        crashed = next(i for i, e in enumerate(log) if seat1_default(e))
        gone = next(
            i
            for i, e in enumerate(log)
            if e["event"].get("seat_disconnected", {}).get("gone")
            and int(e["event"]["seat_disconnected"].get("seat", 0)) == 1
        )
        after_gone = next(i for i, e in enumerate(log) if i > gone and seat1_default(e))
        text, last = "", None
        for i in [i for i in range(crashed, after_gone + 1) if seat1_default(log[i])]:
            _, hand, done = where[i]
            go(page, f"#hand={hand}&move={done + 1}")
            if page.locator("#turn .output").count():
                text += page.inner_text("#turn .output")
                if "RuntimeError: out of ideas" in text and last is None:
                    last = (hand, done)
        assert "Traceback (most recent call last)" in text and "RuntimeError: out of ideas" in text
        assert last is not None
        hand, done = last
        # Every seat's output is listed below the board.
        page.locator("#output details[data-seat='0'] summary").click()
        assert HOSTILE_LINE in page.inner_text("#output details[data-seat='0']")
        # A seat's view shows its own output only: a bot may print its cards.
        go(page, f"#hand={hand}&move={done + 1}&seat=2")
        assert page.locator("#turn .output, #moves .said").count() == 0
        assert page.eval_on_selector_all(
            "#output details", "els => els.map(e => e.dataset.seat)"
        ) == ["2"]
        go(page, f"#hand={hand}&move={done + 1}&seat=1")
        assert "RuntimeError: out of ideas" in page.inner_text("#turn .output")
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(screenshot_path("replay-stderr-crash.png")))
        assert page.evaluate("window.__pwned") is None and not errors, errors
    finally:
        page.close()


def test_view_with_stderr_without_output_files_says_so(eventful, tmp_path):
    log_path, _ = eventful
    alone = tmp_path / "alone.jsonl"
    alone.write_bytes(log_path.read_bytes())
    done = referee("view", "--with-stderr", str(alone))
    assert done.returncode == 0 and "no bot output beside the log" in done.stderr
    data = (tmp_path / "alone.html").read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="viewer-data">(.*?)</script>', data)
    assert match is not None and '"stderr"' not in match.group(1)
    assert json.loads(match.group(1))["ops"]
    # A server's log folder: each match's page with the output files beside its log.
    done = referee("view", "--with-stderr", str(log_path.parent))
    assert done.returncode == 0, done.stderr
    page = (log_path.parent / "view" / log_path.with_suffix(".html").name).read_text()
    found = re.search(r'<script type="application/json" id="viewer-data">(.*?)</script>', page)
    assert found is not None
    seats = json.loads(found.group(1))["stderr"]["seats"]
    assert seats[1]["lines"] > 0 and seats[1]["file"].endswith(".seat1.stderr")


def test_a_raise_in_the_bots_own_code_is_marked_at_its_move(browser, tmp_path):
    """Issue 31, item 6: a Python-kit bot whose choose raises on its second prompt; the
    kit plays the fallback and writes its raised marker; the page names it on the
    timeline and at the move ("the bot's code raised at move N: ZeroDivisionError")."""
    bot = ROOT / "tests" / "table" / "bots" / "raising_bot.py"
    done = referee(
        "match", "--hands", "1", "--seed", "raised-view", "--log-dir", str(tmp_path),
        "--bot", "greedy", "--bot", f"{{python}} {bot}", "--bot", "random", "--bot", "greedy",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    log = Path(re.search(r"^Log: (.+)$", done.stdout, flags=re.M).group(1))  # type: ignore[union-attr]
    page_path = tmp_path / "page.html"
    assert referee("view", "--with-stderr", str(log), "-o", str(page_path)).returncode == 0
    raw = entries(log)
    (turn,) = [
        int(line.split("turn=")[1].split()[0])
        for line in next(tmp_path.glob("*.seat1.stderr")).read_text().splitlines()
        if line.startswith("PUSOY_BOT_RAISED ")
    ]
    move = next(
        done_before + 1
        for (_, hand, done_before), e in zip(moments(raw), raw, strict=True)
        if next(iter(e["event"])) in ("played", "passed")
        and int(next(iter(e["event"].values())).get("turn_id", 0)) == turn
    )
    pos = position_of(1, move, raw)
    page, errors = open_page(browser, page_path.as_uri(), 1280, 720)
    try:
        mark = page.locator(f"#timeline .mark[data-kind='raised'][data-pos='{pos}']")
        assert mark.count() == 1
        title = mark.get_attribute("title") or ""
        assert f"the bot's code raised at hand 1, move {move}: ZeroDivisionError" in title
        assert "raised" in page.eval_on_selector_all(
            "#timeline-key li", "els => els.map(e => e.dataset.kind)"
        )
        mark.click()
        said = page.locator("#turn .raised").inner_text()
        assert said.startswith(f"The bot's code raised at move {move}: ZeroDivisionError")
        assert said.endswith("its kit played the fallback")
        assert not errors, errors
    finally:
        page.close()
