"""The replay page in a real browser: what it shows is what the log says, and nothing else.

Each page is written by ``referee view`` from a real match log and opened from disk in
Debian's Chromium. The expected cards, trick, scores and seat to act come from the log's
raw lines (conftest.moment), not from the viewer's data.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from referee.log.verify import verify_log

from .conftest import (
    CHROMIUM,
    CHROMIUM_ARGS,
    PROFILES,
    ROOT,
    Moment,
    entries,
    hands_in,
    moment,
    require_chromium,
    screenshot_path,
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require_chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def pages(match_logs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``referee view`` of each profile's log, written once."""
    folder = tmp_path_factory.mktemp("pages")
    return {p: view(log, folder / f"{p}.html") for p, log in match_logs.items()}


def view(log: Path, out: Path | None = None) -> Path:
    """Run ``referee view`` as a user would; the page's path."""
    out = out or log.with_suffix(".html")
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "view", str(log), "-o", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out)
    return out


SNAPSHOT_JS = """() => {
  const q = (root, sel) => Array.from(root.querySelectorAll(sel));
  const cards = (root, sel) => q(root, sel).map(e => e.dataset.card);
  const table = document.getElementById('table');
  const turn = document.getElementById('turn');
  return {
    hand: table.dataset.hand, move: table.dataset.move, toAct: table.dataset.toAct,
    acting: q(document, '.seat.acting').map(e => e.dataset.seat),
    seats: [0, 1, 2, 3].map(s => {
      const box = document.querySelector(`.seat[data-seat="${s}"]`);
      return {count: box.dataset.count, total: box.dataset.total,
              cards: cards(box, '.hand [data-card]'), backs: q(box, '.card.back').length};
    }),
    trick: q(document, '#center .trick .play').map(
      e => [Number(e.dataset.seat), cards(e, '[data-card]')]),
    all: cards(document, '[data-card]'),
    turnText: turn.innerText,
    attempts: q(turn, '.reject').length,
    rejects: q(document, '.reject').length,
    legal: q(turn, '.legal').length,
    chosen: q(turn, '.legal .chosen').length,
  };
}"""


class Page:
    """One opened page, with every request and console message it made."""

    def __init__(self, browser: Any, url: str, width: int = 1280) -> None:
        self.requests: list[str] = []
        self.console: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.console.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", self._dialog)
        self.page.goto(url)
        self.page.wait_for_selector("html[data-ready='1']", timeout=10_000)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def go(self, fragment: str) -> None:
        """Follow a link to a moment; returns once the page has drawn it."""
        self.page.evaluate("f => { location.hash = f; }", fragment)
        self.page.wait_for_selector(f"#table[data-pos='{fragment}']", state="attached")

    def attr(self, selector: str, name: str) -> str | None:
        value: str | None = self.page.get_attribute(selector, name)
        return value

    def cards(self, selector: str) -> list[str]:
        found: list[str] = self.page.eval_on_selector_all(
            selector, "els => els.map(e => e.getAttribute('data-card'))"
        )
        return found

    def snapshot(self) -> dict[str, Any]:
        """Everything the checks read, in one round trip."""
        snap: dict[str, Any] = self.page.evaluate(SNAPSHOT_JS)
        return snap

    def close(self) -> None:
        self.page.close()


def check_moment(pg: Page, m: Moment) -> None:
    """The DOM shows exactly the log's cards, counts, totals, trick and seat to act."""
    snap = pg.snapshot()
    assert (snap["hand"], snap["move"]) == (str(m.hand), str(m.move))
    assert snap["toAct"] == ("" if m.to_act is None else str(m.to_act))
    assert snap["acting"] == ([] if m.to_act is None else [str(m.to_act)])
    for s in range(4):
        seat = snap["seats"][s]
        assert seat["count"] == str(m.counts[s]), (m, s)
        assert seat["total"] == str(m.totals[s]), (m, s)
        assert seat["cards"] == m.held[s], (m, s)
    if not m.over:
        assert [tuple(r) for r in snap["trick"]] == [(s, c) for s, c in m.trick], m


def positions(log: list[dict[str, Any]], hand: int) -> list[int]:
    """Moments worth checking in a hand: start, first moves, a trick's end, middle, end."""
    total = moment(log, hand, 0).moves_in_hand
    first_clear = next(
        (k for k in range(1, total + 1) if not moment(log, hand, k).trick and k < total), 1
    )
    return sorted({0, 1, 2, first_clear, first_clear + 1, total // 2, total - 1, total})


@pytest.mark.parametrize("profile", PROFILES)
def test_the_page_shows_what_the_log_says(browser, match_logs, pages, profile):
    log_path = match_logs[profile]
    page_path = pages[profile]
    log = entries(log_path)
    pg = Page(browser, page_path.as_uri())
    try:
        assert not pg.errors, pg.errors
        for hand in hands_in(log):
            for k in positions(log, hand):
                pg.go(f"#hand={hand}&move={k}")
                check_moment(pg, moment(log, hand, k))
        pg.go("#hand=1&move=3")
        pg.page.screenshot(path=str(screenshot_path(f"{profile}-hand1-move3.png")), full_page=True)
        # The page made no request but for itself: everything is inline.
        assert all(url.startswith("file://") for url in pg.requests), pg.requests
        assert len(set(pg.requests)) == 1
        assert not pg.errors and not any("Content Security Policy" in c for c in pg.console)
    finally:
        pg.close()


@pytest.mark.parametrize("profile", PROFILES)
def test_a_seats_view_holds_no_other_seats_card(browser, match_logs, pages, profile):
    log_path = match_logs[profile]
    page_path = pages[profile]
    log = entries(log_path)
    pg = Page(browser, page_path.as_uri())
    try:
        seat = 1
        for hand in hands_in(log):
            total = moment(log, hand, 0).moves_in_hand
            for k in range(0, total, 3):  # every third moment of every hand
                pg.go(f"#hand={hand}&move={k}&seat={seat}")
                m = moment(log, hand, k)
                hidden = {c for s in range(4) if s != seat for c in m.held[s]}
                snap = pg.snapshot()
                assert not set(snap["all"]) & hidden, (hand, k, set(snap["all"]) & hidden)
                assert snap["seats"][seat]["cards"] == m.held[seat]
                # Hidden hands are drawn as that many card backs.
                for s in range(4):
                    if s != seat:
                        assert snap["seats"][s]["backs"] == min(m.counts[s], 13)
        pg.go("#hand=1&move=4&seat=1")
        pg.page.screenshot(path=str(screenshot_path(f"{profile}-seat1.png")), full_page=True)
    finally:
        pg.close()


def turns(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every move of the log: its hand, index, seat, cause and rejected attempts."""
    out: list[dict[str, Any]] = []
    hand = k = 0
    attempts: dict[int, list[str]] = {}
    for entry in log:
        ((kind, p),) = entry["event"].items()
        if kind == "hand_dealt":
            hand, k = int(p["hand_number"]), 0
        elif kind == "action_rejected" and p.get("attempt"):
            attempts.setdefault(int(p.get("turn_id", 0)), []).append(p.get("reason", ""))
        elif kind in ("played", "passed"):
            turn = int(p.get("turn_id", 0))
            out.append(
                {
                    "hand": hand,
                    "move": k,
                    "seat": int(p.get("seat", 0)),
                    "pass": kind == "passed",
                    "cause": p.get("default_cause", ""),
                    "attempts": attempts.pop(turn, []),
                }
            )
            k += 1
    return out


def test_legal_plays_rejections_and_timeouts_at_a_seats_turn(browser, match_logs, pages):
    """pusoy-dos: seat 1 misbehaves once per hand, seat 2 sleeps through a turn."""
    log = entries(match_logs["pusoy-dos"])
    moves = turns(log)
    tried = [t for t in moves if t["attempts"]]
    late = [t for t in moves if t["cause"] == "DEFAULT_CAUSE_TIMEOUT"]
    assert tried and late, "the match was meant to have both"
    plain = [t for t in moves if not t["attempts"] and not t["cause"]][::7]
    pg = Page(browser, pages["pusoy-dos"].as_uri())
    try:
        for t in tried + late + plain:
            # The moment after a move tells that move: one number for one moment.
            pg.go(f"#hand={t['hand']}&move={t['move'] + 1}")
            snap = pg.snapshot()
            text = snap["turnText"]
            assert f"seat {t['seat']}" in text
            assert snap["attempts"] == len(t["attempts"]), text
            if t["attempts"]:
                assert "card not in hand" in text
            assert ("timed out" in text) == (t["cause"] == "DEFAULT_CAUSE_TIMEOUT")
            # The legal plays at that moment, with the seat's choice marked.
            assert snap["legal"] == 1
            assert snap["chosen"] == (0 if t["pass"] else 1), text
        # In the view of a seat that never misbehaved, no attempt is shown.
        other = min(set(range(4)) - {t["seat"] for t in tried + late})
        for t in tried + late:
            pg.go(f"#hand={t['hand']}&move={t['move'] + 1}&seat={other}")
            snap = pg.snapshot()
            assert snap["rejects"] == 0 and snap["legal"] == 0
    finally:
        pg.close()


def test_stepping_keys_scrubber_and_the_address(browser, match_logs, pages):
    log_path = match_logs["big-two"]
    page_path = pages["big-two"]
    log = entries(log_path)
    n1 = moment(log, 1, 0).moves_in_hand
    n2 = moment(log, 2, 0).moves_in_hand
    pg = Page(browser, page_path.as_uri() + "#hand=2&move=7&seat=2")
    try:
        # A link points at a moment and a perspective.
        assert pg.attr("#table", "data-hand") == "2" and pg.attr("#table", "data-move") == "7"
        assert pg.page.input_value("#perspective") == "2"
        pg.page.select_option("#perspective", "all")
        pg.page.keyboard.press("Home")
        assert pg.attr("#table", "data-pos") == "#hand=1&move=0"
        for _ in range(5):
            pg.page.keyboard.press("ArrowRight")
        assert pg.attr("#table", "data-pos") == "#hand=1&move=5"
        pg.page.keyboard.press("ArrowLeft")
        assert pg.attr("#table", "data-move") == "4"
        # A trick at a time: the next position is a fresh lead (or the hand's end).
        pg.page.keyboard.press("Shift+ArrowRight")
        k = int(pg.attr("#table", "data-move") or 0)
        m = moment(log, 1, k)
        assert m.trick == [] and k > 4
        pg.page.keyboard.press("PageDown")
        assert pg.attr("#table", "data-pos") == "#hand=2&move=0"
        pg.page.keyboard.press("End")
        assert pg.attr("#table", "data-pos") == f"#hand=2&move={n2}"
        assert "Finished" in pg.page.inner_text("#standings")
        # The scrubber covers the whole match.
        assert pg.page.get_attribute("#scrubber", "max") == str(n1 + 1 + n2)
        pg.page.eval_on_selector(
            "#scrubber", "s => { s.value = '3'; s.dispatchEvent(new Event('input')); }"
        )
        assert pg.attr("#table", "data-pos") == "#hand=1&move=3"
        # The address follows (a little later: browsers throttle history rewrites).
        for _ in range(40):
            if pg.page.evaluate("location.hash") == "#hand=1&move=3":
                break
            pg.page.wait_for_timeout(50)
        assert pg.page.evaluate("location.hash") == "#hand=1&move=3"
        # Space plays at the chosen speed, and pauses.
        pg.page.select_option("#speed", "150")
        pg.page.focus("body")
        pg.page.keyboard.press(" ")
        for _ in range(100):  # (the page's policy forbids eval, so poll from here)
            if int(pg.attr("#table", "data-move") or 0) >= 6:
                break
            pg.page.wait_for_timeout(50)
        assert int(pg.attr("#table", "data-move") or 0) >= 6
        pg.page.keyboard.press(" ")
        stopped = pg.attr("#table", "data-move")
        pg.page.wait_for_timeout(400)
        assert pg.attr("#table", "data-move") == stopped
        # Hand summaries and the totals chart.
        rows = pg.page.locator("#hands tbody tr").count()
        assert rows == 2
        assert pg.page.locator("#chart svg path").count() >= 4
        # A phone-sized screen.
        pg.page.set_viewport_size({"width": 390, "height": 844})
        pg.go("#hand=1&move=6")
        pg.page.screenshot(path=str(screenshot_path("big-two-phone.png")), full_page=True)
        width = pg.page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, "the page scrolls sideways on a phone"
    finally:
        pg.close()


def rechain(lines: list[dict[str, Any]]) -> str:
    """Lines as a log, each prev_hash the SHA-256 of the line before (as the writer does)."""
    out = []
    prev = ""
    for entry in lines:
        entry = dict(entry)
        if prev:
            entry["prev_hash"] = prev
        text = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
        prev = hashlib.sha256(text.encode("utf-8")).hexdigest()
        out.append(text)
    return "\n".join(out) + "\n"


def test_a_tampered_log_opens_with_a_banner_naming_the_first_bad_line(
    browser, match_logs, tmp_path
):
    source = match_logs["big-two"]
    raw = source.read_text(encoding="utf-8").splitlines()
    # Edit one play's cards_left and leave the hash chain as it was.
    target = next(i for i, line in enumerate(raw) if '"played"' in line and i > 20)
    entry = json.loads(raw[target])
    entry["event"]["played"]["cards_left"] = 12
    raw[target] = json.dumps(entry, separators=(",", ":"))
    log = tmp_path / "tampered.jsonl"
    log.write_text("\n".join(raw) + "\n", encoding="utf-8")
    report = verify_log(log)
    assert not report.ok and report.line == target + 2  # the next line's prev_hash
    pg = Page(browser, view(log).as_uri())
    try:
        banner = pg.page.locator("#banner")
        assert banner.is_visible()
        assert f"First bad line: {report.line}" in banner.inner_text()
        assert "✘" in pg.page.inner_text("#proof")
        pg.page.click("#banner button")
        assert pg.attr("#table", "data-hand") == "1"
        pg.page.screenshot(path=str(screenshot_path("tampered.png")))
    finally:
        pg.close()


HOSTILE = [
    "</script><script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    '"><svg onload=window.__pwned=3>',
    "bell\x07esc\x1b[31mred\u202eevil\x00nul",
    "line\u2028sep\u2029para {{JS}} {{DATA}} <!--",
]


def test_hostile_strings_stay_text(browser, match_logs, tmp_path):
    source = entries(match_logs["big-two"])
    lines = []
    for entry in source:
        entry = json.loads(json.dumps(entry))
        event = entry["event"]
        if "match_created" in event:
            event["match_created"]["config"]["seat_names"] = HOSTILE[:4]
            entry["match_id"] = HOSTILE[0]
        if "seat_connected" in event:
            event["seat_connected"]["bot_name"] = HOSTILE[(seat_of_any(event) + 1) % 5]
        if "action_rejected" in event:
            event["action_rejected"]["message"] = HOSTILE[1]
            event["action_rejected"]["cards"] = ["<b>x</b>", "3C"]
        if "match_ended" in event:
            event["match_ended"]["cancel_reason"] = HOSTILE[2]
        lines.append(entry)
    # A newer log: an unknown field on an entry, an unknown event kind.
    lines[3]["command"] = {"kind": "hello", "note": HOSTILE[0]}
    lines.insert(5, {**lines[4], "event": {"table_moved": {"note": HOSTILE[1]}}})
    for i, entry in enumerate(lines, start=1):
        entry["seq"] = str(i)
    log = tmp_path / "hostile.jsonl"
    log.write_text(rechain(lines), encoding="utf-8")
    page_path = view(log)
    html = page_path.read_text(encoding="utf-8")
    assert html.count("</script>") == 2 and html.count("<script") == 2
    pg = Page(browser, page_path.as_uri())
    try:
        assert pg.page.evaluate("window.__pwned") is None
        assert not pg.dialogs and not pg.errors
        assert pg.page.locator("img").count() == 0
        drawn = pg.page.locator("#chart svg, svg.clock-icon").count()
        assert pg.page.locator("svg").count() == drawn  # the page's own, none from the log
        assert pg.page.locator("script").count() == 2
        assert not any("Content Security Policy" in c for c in pg.console), pg.console
        names = pg.page.eval_on_selector_all(".seat .name", "els => els.map(e => e.textContent)")
        assert HOSTILE[0] in names and HOSTILE[1] in names
        # Control and direction characters are shown as symbols, not obeyed.
        shown = next(n for n in names if n.startswith("bell"))
        assert "\x1b" not in shown and "\u202e" not in shown and "␛" in shown
        assert pg.page.evaluate("document.title").startswith("Match </script>")
        # The unknown event is shown for what it is.
        pg.go("#hand=1&move=0")
        assert 'Event "table_moved"' in pg.page.inner_text("#notes")
        # Walk the whole match: no script ever runs.
        pg.page.keyboard.press("End")
        for _ in range(30):
            pg.page.keyboard.press("ArrowLeft")
        assert pg.page.evaluate("window.__pwned") is None and not pg.dialogs
        pg.page.screenshot(path=str(screenshot_path("hostile.png")), full_page=True)
    finally:
        pg.close()


def seat_of_any(event: dict[str, Any]) -> int:
    ((_, payload),) = event.items()
    return int(payload.get("seat", 0))


def test_download_gives_back_the_exact_log(browser, match_logs, pages, tmp_path):
    log_path = match_logs["pusoy-dos-chips"]
    pg = Page(browser, pages["pusoy-dos-chips"].as_uri())
    try:
        with pg.page.expect_download() as info:
            pg.page.click("#download")
        saved = tmp_path / "downloaded.jsonl"
        info.value.save_as(saved)
        assert saved.read_bytes() == log_path.read_bytes()
    finally:
        pg.close()


def test_view_of_a_folder_links_every_replay(browser, match_logs, tmp_path):
    folder = tmp_path / "matches"
    folder.mkdir()
    for log in match_logs.values():
        shutil.copy(log, folder / log.name)
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "view", str(folder)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    index = folder / "view" / "index.html"
    page = browser.new_page()
    try:
        page.goto(index.as_uri())
        links = page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))")
        assert sorted(links) == sorted(p.with_suffix(".html").name for p in match_logs.values())
        page.click(f"text={next(iter(match_logs.values())).stem}")
        page.wait_for_selector("html[data-ready='1']")
        assert page.get_attribute("#table", "data-hand") == "1"
    finally:
        page.close()
