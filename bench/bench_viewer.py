"""How fast the match viewer is: writing a replay page, opening it, stepping, live delay.

    .venv/bin/python bench/bench_viewer.py                 # plays a 50-hand match first
    .venv/bin/python bench/bench_viewer.py --log LOG.jsonl --rounds 5
    .venv/bin/python bench/bench_viewer.py --live-moves 60 # also the live page's delay

Figures (medians over ``--rounds``):

1. ``referee view``: seconds to fold, verify and write the page of the log (wall clock,
   and this process's CPU time, which a busy machine inflates less); page size.
2. Opening the page in Debian's Chromium from disk: milliseconds from navigation start to
   the page being interactive (its script has drawn the first position and bound the
   keys). Reference, same run: the same measure for a one-line page (the browser's own
   cost of opening any file), so the ratio holds on a busy machine.
3. Stepping: milliseconds per move (ArrowRight) and per jump to the far end (End/Home),
   measured inside the page.
4. Live (optional): the delay from an event's log time to the live page drawing it, for
   a real match on ``referee serve --http`` with bots paced at 50 ms a move.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.async_api import async_playwright  # noqa: E402

from pusoy_client import run_bot  # noqa: E402
from pusoy_client.samples import GreedyBot, RandomBot  # noqa: E402
from referee.server.app import RefereeServer  # noqa: E402
from referee.view.page import replay_page  # noqa: E402
from referee.web.app import WebFront  # noqa: E402
from referee.web.feed import PublicFeed  # noqa: E402
from tests.view.conftest import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    Paced,
    create_match,
    entries,
    play_match,
)
from tests.view.test_live_browser import RECORDER_JS, logged_at  # noqa: E402

STEP_JS = """(n) => {
  const key = k => document.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true}));
  key('Home');
  let t = performance.now();
  for (let i = 0; i < n; i++) key('ArrowRight');
  const step = (performance.now() - t) / n;
  t = performance.now();
  for (let i = 0; i < 10; i++) { key('End'); key('Home'); }
  const jump = (performance.now() - t) / 20;
  return [step, jump];
}"""


async def open_times(page_path: Path, reference: Path, rounds: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"ready": [], "reference": [], "step": [], "jump": []}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for _ in range(rounds):
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            await page.goto(page_path.as_uri())
            await page.wait_for_selector("html[data-ready='1']")
            out["ready"].append(await page.evaluate("window.viewerReadyAt"))
            step, jump = await page.evaluate(STEP_JS, 200)
            out["step"].append(step)
            out["jump"].append(jump)
            await page.close()
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            await page.goto(reference.as_uri())
            out["reference"].append(
                await page.evaluate(
                    "performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd"
                )
            )
            await page.close()
        await browser.close()
    return out


async def live_delays(moves: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        server = RefereeServer("127.0.0.1:0", Path(tmp))
        await server.start()
        web = WebFront(PublicFeed(server.registry), "127.0.0.1:0")
        await web.start()
        try:
            created = await create_match(
                server.address,
                profile="big-two",
                hands=max(1, moves // 50),
                seed="bench-live",
                names=["a", "b", "c", "d"],
                connect_timeout_ms=120_000,
            )
            runner = server.registry.get(created.match_id)
            assert runner is not None
            async with async_playwright() as p:
                browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                page = await browser.new_page()
                await page.goto(f"{web.url}/matches/{created.match_id}")
                await page.wait_for_selector("html[data-ready='1']")
                await page.evaluate(RECORDER_JS)
                await asyncio.gather(
                    *(run_bot(Paced(0.05), server.address, t) for t in created.seat_tokens)
                )
                await page.wait_for_url("**/replay#*", timeout=30_000)
                records = json.loads(await page.evaluate("sessionStorage.getItem('records')"))
                await browser.close()
        finally:
            await web.stop()
            await server.stop(grace=0.5)
        log = entries(server.registry.log_path(created.match_id))
        delays = []
        for seq, entry in enumerate(log, start=1):
            shown = next((r for r in records if r["seq"] >= seq), None)
            if shown is not None and ("played" in entry["event"] or "passed" in entry["event"]):
                delays.append(shown["t"] / 1000 - logged_at(entry))
        return delays


def fmt(values: list[float], unit: str = "ms", scale: float = 1.0) -> str:
    vs = sorted(v * scale for v in values)
    return f"median {statistics.median(vs):.1f} {unit} (min {vs[0]:.1f}, max {vs[-1]:.1f})"


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--log", type=Path, help="a match log (default: play a 50-hand one)")
    parser.add_argument("--hands", type=int, default=50, help="hands of the played match")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--live-moves", type=int, default=0, help="also measure live delay")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is missing: ./scripts/system-packages", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        log = args.log
        if log is None:
            t = time.perf_counter()
            log = await play_match(
                folder,
                [GreedyBot(), RandomBot(seed=1), GreedyBot(), RandomBot(seed=2)],
                profile="pusoy-dos",
                hands=args.hands,
                seed="bench-viewer",
                names=["greedy", "random", "greedy", "random"],
            )
            print(f"played a {args.hands}-hand match in {time.perf_counter() - t:.1f} s: {log}")
        lines = len(log.read_bytes().splitlines())
        build, build_cpu = [], []
        for _ in range(args.rounds):
            t, c = time.perf_counter(), time.process_time()
            page = replay_page(log)
            build.append(time.perf_counter() - t)
            build_cpu.append(time.process_time() - c)
        page_path = folder / "page.html"
        page_path.write_text(page, encoding="utf-8")
        reference = folder / "reference.html"
        reference.write_text("<!DOCTYPE html><meta charset=utf-8><p>x</p>", encoding="utf-8")
        size = log.stat().st_size
        print(f"log: {size / 1e6:.2f} MB, {lines} lines; page: {len(page.encode()) / 1e6:.2f} MB")
        print(f"(1) referee view (fold + verify + write): {fmt(build, 's')}")
        print(f"    CPU time of the same: {fmt(build_cpu, 's')}")
        times = await open_times(page_path, reference, args.rounds)
        ready = statistics.median(times["ready"])
        ref = statistics.median(times["reference"])
        print(f"(2) page interactive after: {fmt(times['ready'])}")
        print(f"    reference, a one-line page: {fmt(times['reference'])}")
        print(f"    ratio: {ready / ref:.2f}x")
        print(f"(3) one move (ArrowRight): {fmt(times['step'])}")
        print(f"    a jump across the match (End/Home): {fmt(times['jump'])}")
        if args.live_moves:
            delays = await live_delays(args.live_moves)
            q = statistics.quantiles(delays, n=10)
            print(
                f"(4) live: {len(delays)} moves, delay from log to page "
                f"{fmt(delays, 'ms', 1000)}, 90th percentile {q[-1] * 1000:.0f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
