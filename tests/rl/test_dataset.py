"""``referee dataset`` on real logs: one row per logged decision, each row what the
observer let that seat see then, each mask the engine's legal plays, the action inside
it; a log that does not verify (or is not signed by the given key) is left out.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from pusoy_client import run_bot
from pusoy_client.rl import NUM_ACTIONS, OBS_SIZE, PASS_ACTION, HandIndex, SeatEncoder
from pusoy_client.samples import GreedyBot, RandomBot
from referee.log.reader import read_log
from referee.match import observer
from referee.match.settings import MatchSettings
from referee.match.state import evolve, initial_state
from referee.protocol import common, match_service_grpc
from referee.protocol.convert import ts_us
from referee.rl.dataset import export
from referee.rules import Rules, sorted_cards
from referee.server.app import RefereeServer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Three real matches (one per profile, options mixed in) and the referee's key."""
    folder = tmp_path_factory.mktemp("dataset")

    async def play() -> str:
        server = RefereeServer("127.0.0.1:0", folder / "logs")
        await server.start()
        try:
            cases = [
                ("pusoy-dos", {"match_end": "hands 2"}),
                ("pusoy-dos-chips", {"match_end": "hands 2", "revolution": True}),
                ("big-two", {"match_end": "hands 2", "no_finish_on_lone_two": True}),
            ]
            for i, (profile, options) in enumerate(cases):
                settings = MatchSettings(
                    rules=Rules.for_profile(profile, options),
                    seed=f"dataset-{i}",
                    seat_names=("north", "east", "south", "west"),
                )
                async with server.organiser_channel() as channel:
                    stub = match_service_grpc.MatchServiceStub(channel)
                    created = await stub.CreateMatch(settings.request_pb())
                bots = [RandomBot(seed=i), GreedyBot(), RandomBot(seed=10 + i), GreedyBot()]
                await asyncio.gather(
                    *(
                        run_bot(b, server.address, t)
                        for b, t in zip(bots, created.seat_tokens, strict=True)
                    )
                )
                await server.registry.wait_over(created.match_id)
            return server.signer.public_key_text
        finally:
            await server.stop(grace=0.5)

    key = asyncio.run(play())
    return folder / "logs", key


def expected_rows(log: Path) -> list[dict[str, object]]:
    """Each decision of a log, worked out here from the match machine's own fold and the
    observer's prompt for that turn, encoded by the kit as a live bot would."""
    lines = read_log(log).lines
    first = lines[0].entry
    state = initial_state(first.match_id, first.event.match_created, ts_us(first.time))
    encoders = [SeatEncoder() for _ in range(4)]
    for seat, enc in enumerate(encoders):
        enc.on_welcome(observer.welcome(state, seat, False))
    out: list[dict[str, object]] = []
    started: dict[int, common.TurnStarted] = {}
    dealt: list[HandIndex] = []
    for line in lines[1:]:
        event = line.entry.event
        kind = line.kind
        if kind == "turn_started":
            started[event.turn_started.turn_id] = event.turn_started
        if kind in ("played", "passed"):
            body = event.played if kind == "played" else event.passed
            seat = body.seat
            hand = state.rules.hand
            assert hand is not None and hand.turn == seat
            plays = hand.legal_plays(seat)
            index = dealt[seat]
            legal = {index.action_of(m) for m in plays.masks}
            if plays.can_pass:
                legal.add(PASS_ACTION)
            cards = HandIndex.mask_of(event.played.play.cards) if kind == "played" else 0
            row: dict[str, object] = {
                "seat": seat,
                "legal": legal,
                "action": index.action_of(cards),
            }
            if body.turn_id in started and state.turn is not None:
                state.seats[seat].want_legal_plays = True
                prompt = observer.prompt(state, state.turn, started[body.turn_id])
                row["observation"] = encoders[seat].observe(prompt)
            out.append(row)
        evolve(state, event, ts_us(line.entry.time))
        if kind == "hand_dealt":
            order = state.settings.rules.suit_order.value
            hand = state.rules.hand
            assert hand is not None
            dealt = [HandIndex(sorted_cards(h), order) for h in hand.hands]
        for seat, enc in enumerate(encoders):
            seen = observer.for_seat(event, seat)
            if seen is not None:
                enc.on_event(seen)
    return out


def test_one_row_per_decision_as_the_observer_allowed_it(
    logs: tuple[Path, str], tmp_path: Path
) -> None:
    folder, key = logs
    out = tmp_path / "rows.parquet"
    summary = export([folder], out, public_key=key, progress=None)  # signed by the referee
    assert summary.logs == 3 and not summary.skipped
    table = pq.read_table(out)
    assert table.num_rows == summary.rows
    assert table.schema.field("observation").type.list_size == OBS_SIZE
    assert table.schema.field("action_mask").type.list_size == NUM_ACTIONS
    rows = table.to_pylist()
    checked = 0
    for log in sorted(folder.glob("*.jsonl")):
        mine = [r for r in rows if r["log"] == log.name]
        want = expected_rows(log)
        assert len(mine) == len(want) > 50  # one row per logged play or pass
        for got, exp in zip(mine, want, strict=True):
            mask = np.array(got["action_mask"], dtype=np.int8)
            assert got["seat"] == exp["seat"]
            assert set(np.flatnonzero(mask).tolist()) == exp["legal"]
            assert got["action"] == exp["action"] and mask[got["action"]] == 1
            assert got["bot"] in ("north", "east", "south", "west")
            assert got["hand_score"] is not None and got["reward"] is not None
            if "observation" in exp:
                live = exp["observation"]
                np.testing.assert_array_equal(
                    np.array(got["observation"], np.int8), live["observation"]
                )
                np.testing.assert_array_equal(mask, live["action_mask"])
                checked += 1
    assert checked > 150


def test_json_lines_hold_the_same_rows_and_full_information_adds_the_hands(
    logs: tuple[Path, str], tmp_path: Path
) -> None:
    folder, _ = logs
    export([folder], tmp_path / "a.parquet", progress=None)
    export([folder], tmp_path / "b.jsonl", full_information=True, progress=None)
    parquet = pq.read_table(tmp_path / "a.parquet").to_pylist()
    lines = [json.loads(x) for x in (tmp_path / "b.jsonl").read_text().splitlines()]
    assert len(lines) == len(parquet)
    for p, j in zip(parquet, lines, strict=True):
        hands = j.pop("hands")
        assert j == p
        assert len(hands) == 4 and sum(h.bit_count() for h in hands) > 0
        held = hands[p["seat"]]
        obs = np.array(p["observation"], np.int8)
        assert obs[:52].sum() == held.bit_count()  # the seat's own cards, nobody else's


def test_a_log_that_does_not_verify_or_is_not_signed_by_the_key_is_left_out(
    logs: tuple[Path, str], tmp_path: Path
) -> None:
    folder, _ = logs
    mixed = tmp_path / "mixed"
    shutil.copytree(folder, mixed)
    victim = sorted(mixed.glob("*.jsonl"))[0]
    text = victim.read_text().replace('"3C"', '"3S"', 1)
    victim.write_text(text)
    summary = export([mixed], tmp_path / "m.parquet", progress=None)
    assert summary.logs == 2 and [p for p, _ in summary.skipped] == [victim]
    # With a key that signed none of them, every log is left out.
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    other = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    summary = export([folder], tmp_path / "n.parquet", public_key=other, progress=None)
    assert summary.logs == 0 and len(summary.skipped) == 3


def test_the_command_line(logs: tuple[Path, str], tmp_path: Path) -> None:
    folder, _ = logs
    out = tmp_path / "cli.parquet"
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "dataset", str(folder), "-o", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"{out}: " in done.stdout and "from 3 logs" in done.stdout
    assert "3/3 logs" in done.stderr  # the progress
    bad = subprocess.run(
        [sys.executable, "-m", "referee.cli", "dataset", str(tmp_path / "nowhere"), "-o", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert bad.returncode == 2 and "no such file or folder" in bad.stderr


def test_without_the_extra_the_command_says_which_to_install(tmp_path: Path) -> None:
    for missing in ("pyarrow", "gymnasium"):
        code = (
            "import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            f"        if name.split('.')[0] == {missing!r}:\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "from referee.cli import main\n"
            f"sys.exit(main(['dataset', {str(tmp_path)!r}, '-o', 'x.parquet']))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
        )
        assert done.returncode == 2, done.stderr
        assert f"{missing} is missing" in done.stderr
        assert 'pip install "pusoy-referee[rl]"' in done.stderr
