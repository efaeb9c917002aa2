"""``referee view DIR`` of a real tournament, in a real browser, wide and at phone width.

The tournament is run by ``referee tournament`` (five built-in bots, every table of four,
two deal groups a table); what the page must show is read from its standings.json and
results.jsonl here: the order and the sort key, the intervals and their overlap marks,
each head-to-head cell's colour from its confidence interval and likelihood of
superiority, and which matches a filter keeps.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from .conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, require_chromium, screenshot_path

CONFIG = """
[tournament]
name = "club <night>"
seed = "view-page"
format = "round-robin"
rounds = 2
seatings = "none"
concurrency = 2
output = "out"

[rules]
profile = "pusoy-dos"
hands = 1

[time]
turn_time_ms = 3000
connect_timeout_ms = 10000
"""
BOTS = [
    ("greedy", "greedy"),
    ("random", "random"),
    ("greedy-2", "greedy"),
    ("random-2", "random"),
    ("rando.3", "random"),
]


def referee(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a finished tournament, with its pages written."""
    folder = tmp_path_factory.mktemp("tournament")
    text = CONFIG + "".join(
        f'\n[[bot]]\nname = "{name}"\nbuiltin = "{kind}"\n' for name, kind in BOTS
    )
    (folder / "t.toml").write_text(text, encoding="utf-8")
    done = referee("tournament", "t.toml", cwd=folder)
    assert done.returncode == 0, done.stdout + done.stderr
    out = folder / "out"
    shown = referee("view", str(out))
    assert shown.returncode == 0, shown.stderr
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require_chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def expected_sig(pair: dict[str, Any]) -> str:
    if pair["groups"] < 2 or pair["ci95_low"] is None:
        return "none"
    if pair["ci95_low"] > 0:
        return "better"
    if pair["ci95_high"] < 0:
        return "worse"
    return (
        "likely-better" if pair["los"] >= 0.9 else "likely-worse" if pair["los"] <= 0.1 else "even"
    )


def test_the_standings_the_matrix_and_the_chart(browser, tournament):
    standings = json.loads((tournament / "standings.json").read_text(encoding="utf-8"))
    bots = standings["bots"]
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto((tournament / "view" / "index.html").as_uri())
        page.wait_for_selector("html[data-ready='1']")
        assert page.inner_text("h1") == "club <night>"
        rows = page.eval_on_selector_all(
            "table.ratings tbody tr",
            "rows => rows.map(r => [r.dataset.bot, r.cells[1].textContent, r.cells[3].textContent,"
            " r.cells[5].textContent])",
        )
        assert [r[0] for r in rows] == [b["name"] for b in bots]
        for (_, mark, key, interval), b in zip(rows, bots, strict=True):
            assert (mark == "~") == b["overlaps_above"]
            assert key == f"{b['ordinal']:.2f}"  # the sort key, mu - 3 sigma
            assert interval == f"[{b['rating_low']:.1f}, {b['rating_high']:.1f}]"
        # The chart: one row per bot in the table's order, its interval and its mu drawn.
        chart = page.eval_on_selector_all(
            ".rating-chart .rc-row[data-bot]", "rs => rs.map(r => r.dataset.bot)"
        )
        assert chart == [b["name"] for b in bots]
        assert page.locator(".rating-chart line.interval").count() == len(bots)
        assert page.locator(".rating-chart circle.mu").count() == len(bots)
        # The matrix: every ordered pair, coloured by what its interval says.
        cells = {
            (c["a"], c["b"]): c["sig"]
            for c in page.eval_on_selector_all(
                ".matrix td.pair",
                "cs => cs.map(c => ({a: c.dataset.a, b: c.dataset.b, sig: c.dataset.sig}))",
            )
        }
        assert len(cells) == len(bots) * (len(bots) - 1)
        flip = {
            "better": "worse",
            "worse": "better",
            "likely-better": "likely-worse",
            "likely-worse": "likely-better",
            "even": "even",
            "none": "none",
        }
        for pair in standings["pairwise"]:
            sig = expected_sig(pair)
            assert cells[(pair["a"], pair["b"])] == sig, pair
            assert cells[(pair["b"], pair["a"])] == flip[sig], pair
        assert {"better", "worse"} & set(cells.values()), "the run was meant to separate a pair"
        # Nothing of the page is wider than the screen; it made no request but itself.
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        page.screenshot(path=str(screenshot_path("tournament-1280x720.png")))
        page.screenshot(path=str(screenshot_path("tournament-full.png")), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.screenshot(path=str(screenshot_path("tournament-phone.png")), full_page=True)
        assert not errors, errors
    finally:
        page.close()


def test_matches_filtered_by_bot_and_by_pair(browser, tournament):
    results = [json.loads(line) for line in (tournament / "results.jsonl").read_text().splitlines()]
    bots_of = {r["match_id"]: {s["bot"] for s in r["seats"]} for r in results}
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto((tournament / "view" / "index.html").as_uri())
        page.wait_for_selector("html[data-ready='1']")

        def shown() -> set[str]:
            found: list[str] = page.eval_on_selector_all(
                "#matches .match:not([hidden]) a", "as => as.map(a => a.textContent)"
            )
            return set(found)

        assert shown() == set(bots_of)
        # One compact line per match, with its group, table and seating.
        first = page.inner_text("#matches .match >> nth=0")
        assert "group 0 · table 0 · seating 0" in first and "✔ verifies" in first
        page.select_option("#f-bot", "rando.3")
        assert shown() == {m for m, b in bots_of.items() if "rando.3" in b}
        assert shown() != set(bots_of)
        assert page.evaluate("location.hash") == "#bot=rando.3"
        # A head-to-head cell lists the matches of its two bots.
        page.click(".matrix td.pair[data-a='greedy'][data-b='random-2'] button")
        both = {m for m, b in bots_of.items() if {"greedy", "random-2"} <= b}
        assert shown() == both and both
        assert page.input_value("#f-bot") == "greedy" and page.input_value("#f-with") == "random-2"
        assert f"{len(both)} of {len(results)} matches" in page.inner_text("#f-count")
        # The address keeps the filter: a link to it opens filtered.
        url = page.url
        again = browser.new_page()
        again.goto(url)
        again.wait_for_selector("html[data-ready='1']")
        assert again.eval_on_selector_all("#matches .match:not([hidden])", "m => m.length") == len(
            both
        )
        again.close()
        page.click("#f-clear")
        assert shown() == set(bots_of)
        # A replay opens from its line.
        page.click("#matches .match >> nth=0 >> a")
        page.wait_for_selector("#table[data-hand='1']")
    finally:
        page.close()
