"""Names and reasons chosen by bots and organisers reach a terminal only escaped."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from referee.protocol import PROTOCOL_VERSION, match_service, play_service
from referee.text import printable

from .conftest import Seat, create, log_path, lowest_policy

ROOT = Path(__file__).resolve().parents[2]
EVIL = "evil\x1b[2J\x1b]0;pwned\x07\u202egpj.exe\r\nforged line"


async def referee(*args: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "referee.cli", *args, cwd=ROOT, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
    return out.decode()


def test_printable_escapes_controls_and_format_characters():
    assert printable(EVIL) == "evil\\x1b[2J\\x1b]0;pwned\\x07\\u202egpj.exe\\x0d\\x0aforged line"
    assert printable("Ünïcødé ♠ 名前 3♦") == "Ünïcødé ♠ 名前 3♦"
    assert printable("\x9b31m") == "\\x9b31m"  # the one-byte CSI of C1


async def test_replay_and_verify_print_a_hostile_bot_name_and_reason_escaped(
    server, organiser, tmp_path
):
    created = await create(organiser, hands=1, seed="terminal", seat_names=["a", "b", "c", "d"])
    hello = play_service.Hello(
        protocol_version=PROTOCOL_VERSION,
        token=created.seat_tokens[0],
        want_legal_plays=True,
        bot_name=EVIL,
    )
    seats = [Seat(server.address, t, lowest_policy) for t in created.seat_tokens]
    seats[0].start(play_service.PlayRequest(hello=hello))
    for s in seats[1:]:
        s.start()
    await seats[0].wait_kind("prompt")
    await organiser.CancelMatch(
        match_service.CancelMatchRequest(match_id=created.match_id, reason="why\x1b[31m red")
    )
    for s in seats:
        await s.finish()
    path = log_path(server, created.match_id)
    for command in (["verify", str(path)], ["replay", str(path)]):
        out = await referee(*command)
        assert out and "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    replay = out
    assert "(evil\\x1b[2J\\x1b]0;pwned\\x07\\u202egpj.exe" in replay
    assert "why\\x1b[31m red" in replay
    assert "\nforged line" not in replay  # a name cannot start a line of its own
