"""The live page of ``referee serve --http``, in a real browser, during a real match.

The page is opened before the bots connect; a MutationObserver (installed by the test)
records every state the page draws. Afterwards each play must have appeared within a few
seconds of being logged, and no drawn state may hold a card that was hidden at that
moment (computed from the finished log).
"""

from __future__ import annotations

import asyncio
import json
import statistics
from datetime import datetime
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from pusoy_client import run_bot
from referee.bots import play_seat
from referee.server.app import RefereeServer
from referee.web.app import WebFront, WebLimits
from referee.web.feed import PublicFeed

from .conftest import (
    CHROMIUM,
    CHROMIUM_ARGS,
    Dozy,
    Paced,
    create_match,
    entries,
    require_chromium,
    screenshot_path,
)

RECORDER_JS = """() => {
  window.__records = [];
  const table = document.getElementById('table');
  const cards = sel => Array.from(document.querySelectorAll(sel)).map(e => e.dataset.card);
  // Kept in sessionStorage too: it outlives the page's move to the replay.
  const record = () => {
    window.__records.push({
      t: Date.now(), seq: Number(table.dataset.lastSeq || 0), hand: table.dataset.hand,
      moves: cards('#moves [data-card]'), all: cards('[data-card]'),
    });
    sessionStorage.setItem('records', JSON.stringify(window.__records));
  };
  new MutationObserver(record).observe(document.body, {subtree: true, childList: true,
                                                      attributes: true, characterData: true});
  record();
}"""


def hidden_at(log: list[dict[str, Any]], seq: int) -> set[str]:
    """Cards nobody but their holder may know after line ``seq``: the current hand's
    cards not yet played, until the hand ends."""
    hidden: set[str] = set()
    for entry in log[:seq]:
        ((kind, p),) = entry["event"].items()
        if kind == "hand_dealt":
            hidden = {c for sc in p["hands"] for c in sc["cards"]}
        elif kind == "played":
            hidden -= set(p["play"]["cards"])
        elif kind == "hand_ended":
            hidden = set()
    return hidden


def logged_at(entry: dict[str, Any]) -> float:
    return datetime.fromisoformat(entry["time"].replace("Z", "+00:00")).timestamp()


async def test_live_page_follows_the_match_and_never_holds_a_hidden_card(tmp_path: Path):
    require_chromium()
    server = RefereeServer("127.0.0.1:0", tmp_path / "logs")
    await server.start()
    web = WebFront(PublicFeed(server.registry), "127.0.0.1:0")
    await web.start()
    records: list[dict[str, Any]] = []
    try:
        created = await create_match(
            server,
            profile="big-two",
            hands=1,
            seed="live-view",
            names=["north", "east", "south", "west"],
            connect_timeout_ms=120_000,  # the bots connect once the page is open
        )
        runner = server.registry.get(created.match_id)
        assert runner is not None
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = await browser.new_page(viewport={"width": 1200, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            await page.goto(f"{web.url}/matches/{created.match_id}")
            await page.wait_for_selector("html[data-ready='1']")
            await page.evaluate(RECORDER_JS)
            bots = [
                asyncio.create_task(run_bot(Paced(0.2), server.address, token))
                for token in created.seat_tokens
            ]
            shot = False
            while not runner.done.is_set():
                await asyncio.sleep(0.3)
                if not shot and int(await page.get_attribute("#table", "data-move") or 0) > 12:
                    await page.screenshot(path=str(screenshot_path("live.png")), full_page=True)
                    shot = True
            await asyncio.gather(*bots)
            # When the match is over the page opens the full replay.
            await page.wait_for_url("**/replay#*", timeout=10_000)
            await page.wait_for_selector("html[data-ready='1']")
            records = json.loads(await page.evaluate("sessionStorage.getItem('records')"))
            assert await page.locator(".seat .hand [data-card]").count() > 0  # revealed
            assert "accepts this log" in await page.inner_text("#proof")
            assert not errors, errors
            await browser.close()
    finally:
        await web.stop()
        await server.stop(grace=0.5)

    log = entries(server.registry.log_path(created.match_id))
    assert records and records[-1]["seq"] == len(log), "the page saw the match end"
    # Never a hidden card on the page.
    for rec in records:
        leaked = set(rec["all"]) & hidden_at(log, rec["seq"])
        assert not leaked, (rec["seq"], leaked)
    # Every play appeared, soon after it was logged.
    delays = []
    for seq, entry in enumerate(log, start=1):
        played = entry["event"].get("played")
        if played is None:
            continue
        cards = set(played["play"]["cards"])
        shown = next((r for r in records if r["seq"] >= seq and cards <= set(r["moves"])), None)
        assert shown is not None, (
            f"the play of line {seq} ({cards}) never appeared",
            [(r["seq"], r["t"]) for r in records if seq - 10 <= r["seq"] <= seq + 10],
            [(i, logged_at(e)) for i, e in enumerate(log[seq - 10 : seq + 10], start=seq - 9)],
        )
        delays.append(shown["t"] / 1000 - logged_at(entry))
    assert max(delays) < 5.0, delays
    median, worst = statistics.median(delays) * 1000, max(delays) * 1000
    print(f"live delay: median {median:.0f} ms, max {worst:.0f} ms")


async def test_the_match_list_and_the_turn_clock_follow_the_server(tmp_path: Path):
    """The list of matches changes row by row as matches start and end, with no reload;
    the live page counts the acting seat's turn down, in the server's clock."""
    require_chromium()
    server = RefereeServer("127.0.0.1:0", tmp_path / "logs")
    await server.start()
    web = WebFront(PublicFeed(server.registry), "127.0.0.1:0", WebLimits(list_poll_s=0.2))
    await web.start()
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            listing = await browser.new_page(viewport={"width": 1280, "height": 720})
            loads: list[str] = []
            listing.on("load", lambda: loads.append("load"))
            await listing.goto(web.url + "/")
            await listing.wait_for_selector("html[data-ready='1']")
            assert await listing.is_visible("#no-match")
            await listing.evaluate("window.__same = 1")
            created = await create_match(
                server,
                profile="pusoy-dos",
                hands=1,
                seed="live-list",
                names=["slow", "b", "c", "d"],
                turn_time_ms=6000,
                connect_timeout_ms=120_000,
            )
            mid = created.match_id
            row = f"#live-matches tr[data-id='{mid}']"
            await listing.wait_for_selector(f"{row} td.status:text('waiting')", timeout=10_000)
            assert not await listing.is_visible("#no-match")
            # The live page: no choice of view (every hand is face down), a turn clock.
            live = await browser.new_page(viewport={"width": 1280, "height": 720})
            await live.goto(f"{web.url}/matches/{mid}")
            await live.wait_for_selector("html[data-ready='1']")
            assert not await live.is_visible("#perspective")
            runner = server.registry.get(mid)
            assert runner is not None
            tokens = created.seat_tokens
            bots = [asyncio.create_task(play_seat(Dozy(2.5), server.address, tokens[0]))]
            bots += [
                asyncio.create_task(run_bot(Paced(0.05), server.address, t)) for t in tokens[1:]
            ]
            # The slow seat thinks 2.5 s over its first turn: its clock runs meanwhile.
            await live.wait_for_selector(
                "#table[data-to-act='0']", state="attached", timeout=30_000
            )
            await live.wait_for_selector("#clock.ticking[data-left]")
            first = int(await live.get_attribute("#clock", "data-left") or 0)
            await live.screenshot(path=str(screenshot_path("live-clock-1280x720.png")))
            await asyncio.sleep(0.8)
            second = int(await live.get_attribute("#clock", "data-left") or 0)
            assert 0 < second < first <= 6000, (first, second)
            assert 300 <= first - second <= 2500, (first, second)
            assert "s left" in await live.inner_text("#clock")
            await live.set_viewport_size({"width": 390, "height": 844})
            await live.screenshot(path=str(screenshot_path("live-phone.png")))
            await listing.wait_for_selector(f"{row} td.status:text('running')", timeout=30_000)
            await asyncio.gather(*bots)
            await listing.wait_for_selector(f"{row} td.status:text('finished')", timeout=10_000)
            await listing.screenshot(path=str(screenshot_path("live-list.png")))
            # Row by row, never reloaded.
            assert loads == ["load"] and await listing.evaluate("window.__same") == 1
            updates = int(await listing.get_attribute("#live-matches", "data-updates") or 0)
            assert updates >= 3, updates
            await browser.close()
    finally:
        await web.stop()
        await server.stop(grace=0.5)
