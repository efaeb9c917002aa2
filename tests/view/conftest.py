"""Real matches to view, a real browser to view them in, and the log read independently.

Logs come from real matches on an in-process referee over real gRPC, with bots that
also misbehave (rejected attempts, a timeout). The browser is Debian's Chromium driven by
Playwright (``scripts/test`` installs it); Playwright downloads no browser of its own.
The expected state at any moment is computed here from the log's raw JSON lines, never
from the viewer's own data.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from pusoy_client import Bot, Choice, run_bot
from pusoy_client.samples import GreedyBot, Misbehaving, RandomBot
from referee.bots import play_seat
from referee.bots.strategies import Choice as StrategyChoice
from referee.bots.strategies import GreedyBot as StrategyGreedy
from referee.protocol import common, match_service, match_service_grpc, play_service
from referee.server.app import RefereeServer

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(os.environ.get("VIEWER_SCREENSHOTS", ROOT / "build" / "screenshots"))


def require_chromium() -> None:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests need Debian's chromium "
            "(./scripts/system-packages, which ./scripts/test runs)"
        )


def screenshot_path(name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / name


class Dozy:
    """Greedy, but sleeps past the deadline on its first turn of each hand (a timeout).

    Played with the referee's own small client (referee.bots), not the Python kit: the
    kit answers with a fallback before the deadline when a bot runs late, so a kit's
    bot is never timed out.
    """

    name = "dozy"

    def __init__(self, sleep_s: float) -> None:
        self.sleep_s = sleep_s
        self.hand_seen = 0
        self.greedy = StrategyGreedy()

    async def _late(self, prompt: play_service.TurnPrompt) -> StrategyChoice:
        await asyncio.sleep(self.sleep_s)
        return self.greedy.choose(prompt)

    def choose(self, prompt: play_service.TurnPrompt) -> Any:
        if prompt.state.hand_number != self.hand_seen:
            self.hand_seen = prompt.state.hand_number
            return self._late(prompt)
        return self.greedy.choose(prompt)


class Paced(GreedyBot):
    """Greedy, taking ``delay_s`` per move, so a person (or a test) can watch."""

    name = "paced"

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    async def _paced(self, prompt: play_service.TurnPrompt) -> Choice:
        await asyncio.sleep(self.delay_s)
        return GreedyBot.choose(self, prompt)

    def choose(self, prompt: play_service.TurnPrompt) -> Any:
        return self._paced(prompt)


async def create_match(
    server: RefereeServer,
    *,
    profile: str,
    hands: int,
    seed: str,
    names: Sequence[str],
    turn_time_ms: int = 5000,
    connect_timeout_ms: int = 10_000,
) -> match_service.CreateMatchResponse:
    async with server.organiser_channel() as channel:
        stub = match_service_grpc.MatchServiceStub(channel)
        return await stub.CreateMatch(
            match_service.CreateMatchRequest(
                profile=profile,
                hands=hands,
                seed=seed,
                seat_names=list(names),
                time_control=common.TimeControl(
                    turn_time_ms=turn_time_ms, connect_timeout_ms=connect_timeout_ms
                ),
            )
        )


async def play_match(
    log_dir: Path,
    bots: Sequence[Bot | Dozy],
    *,
    profile: str,
    hands: int,
    seed: str,
    names: Sequence[str],
    turn_time_ms: int = 5000,
) -> Path:
    """Play one whole match on an in-process referee; the log's path."""
    server = RefereeServer("127.0.0.1:0", log_dir)
    await server.start()
    try:
        created = await create_match(
            server,
            profile=profile,
            hands=hands,
            seed=seed,
            names=names,
            turn_time_ms=turn_time_ms,
        )
        seats = zip(bots, created.seat_tokens, strict=True)
        await asyncio.wait_for(
            asyncio.gather(
                *(
                    play_seat(b, server.address, t)
                    if isinstance(b, Dozy)
                    else run_bot(b, server.address, t)
                    for b, t in seats
                )
            ),
            120,
        )
        await server.registry.wait_over(created.match_id)
        return server.registry.log_path(created.match_id)
    finally:
        await server.stop(grace=0.5)


PROFILES = ("pusoy-dos", "pusoy-dos-chips", "big-two")


@pytest.fixture(scope="session")
def match_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One real two-hand match log per profile, with rejected attempts and a timeout."""
    folder = tmp_path_factory.mktemp("view-logs")

    async def play_all() -> dict[str, Path]:
        logs = {}
        for i, profile in enumerate(PROFILES):
            bots: list[Bot | Dozy] = [
                GreedyBot(),
                Misbehaving(RandomBot(seed=i)),
                Dozy(0.45) if profile == "pusoy-dos" else GreedyBot(),
                RandomBot(seed=10 + i),
            ]
            logs[profile] = await play_match(
                folder,
                bots,
                profile=profile,
                hands=2,
                seed=f"view-{profile}",
                names=["north", "east", "south", "west"],
                turn_time_ms=300 if profile == "pusoy-dos" else 5000,
            )
        return logs

    return asyncio.run(play_all())


# -- the log, read independently of the viewer ----------------------------------------


def entries(path: Path) -> list[dict[str, Any]]:
    """The log's entries (a signed log's last line, its trailer, is no entry)."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [entry for entry in lines if "trailer" not in entry]


def seat_of(payload: dict[str, Any]) -> int:
    return int(payload.get("seat", 0))


@dataclasses.dataclass
class Moment:
    """What the log says at one position: hand ``hand`` after ``move`` actions."""

    hand: int
    move: int
    moves_in_hand: int
    held: list[list[str]]
    counts: list[int]
    trick: list[tuple[int, list[str]]]
    """The current trick's actions, (seat, cards); a pass has no cards."""
    totals: list[int]
    to_act: int | None
    over: bool
    seq: int
    """The log line of the last event shown (the deal, or the move)."""


def moment(log: list[dict[str, Any]], hand: int, move: int) -> Moment:
    totals = [0, 0, 0, 0]
    current = None
    for i, entry in enumerate(log):
        ((kind, p),) = entry["event"].items()
        if kind == "hand_dealt" and int(p.get("hand_number", 0)) == hand:
            current = i
            break
        if kind == "hand_ended":
            totals = [int(x) for x in p.get("totals", [0, 0, 0, 0])]
    assert current is not None, f"no hand {hand}"
    dealt = log[current]["event"]["hand_dealt"]
    held = [[] for _ in range(4)]
    for sc in dealt["hands"]:
        held[seat_of(sc)] = list(sc["cards"])
    trick: list[tuple[int, list[str]]] = []
    done = 0
    seq = current + 1
    to_act = None
    moves_in_hand = 0
    over = False
    end_totals = None
    for j in range(current + 1, len(log)):
        ((kind, p),) = log[j]["event"].items()
        if kind in ("played", "passed"):
            moves_in_hand += 1
            if done == move:
                if to_act is None:
                    to_act = seat_of(p)
                continue
            done += 1
            seq = j + 1
            cards = list(p.get("play", {}).get("cards", [])) if kind == "played" else []
            held[seat_of(p)] = [c for c in held[seat_of(p)] if c not in cards]
            trick.append((seat_of(p), cards))
        elif kind == "trick_cleared" and done <= move and moves_in_hand == done:
            trick = []
        elif kind == "hand_ended":
            end_totals = [int(x) for x in p.get("totals", [0, 0, 0, 0])]
            break
    if move == moves_in_hand and end_totals is not None:
        over = True
        totals = end_totals
    return Moment(
        hand=hand,
        move=move,
        moves_in_hand=moves_in_hand,
        held=held,
        counts=[len(h) for h in held],
        trick=trick,
        totals=totals,
        to_act=to_act,
        over=over,
        seq=seq,
    )


def hands_in(log: list[dict[str, Any]]) -> Iterator[int]:
    for entry in log:
        ((kind, p),) = entry["event"].items()
        if kind == "hand_dealt":
            yield int(p.get("hand_number", 0))
