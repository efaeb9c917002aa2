"""``referee match``: an embedded referee, four bots, one full match.

Built-in bots (``random``, ``greedy``) run in this process as real gRPC clients; any
other bot is a command spawned as its own process, given the referee's address and its
seat token (``{address}`` and ``{token}`` in the command are replaced, and the
environment carries PUSOY_ADDRESS and PUSOY_TOKEN). A ``stdio:COMMAND`` bot is spawned
behind the stdio bridge (``referee.stdio``). Each spawned bot and all of its children are
stopped when the match ends.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

import grpc

from referee.bots import BUILTIN_BOTS, builtin_bot, play_seat
from referee.log.signing import LogSigner
from referee.protocol import common, match_service, match_service_grpc
from referee.server.app import RefereeServer
from referee.stdio import PREFIX as STDIO_PREFIX
from referee.stdio import bridge_argv
from referee.tournament.procs import BotProcess, expand


@dataclasses.dataclass(frozen=True)
class LocalMatchResult:
    match_id: str
    info: match_service.MatchInfo
    log_path: Path


class MatchSetupError(RuntimeError):
    """The match could not start: the referee cannot listen or log, or refused the match."""


class BotStartError(MatchSetupError):
    """A bot command that cannot be run (missing program, not executable)."""


class BotSpec:
    """A seat's bot: a built-in name or a command line."""

    def __init__(self, text: str) -> None:
        self.text = text.strip()
        if not self.text:
            raise ValueError("an empty bot")
        self.builtin = self.text in BUILTIN_BOTS
        self.stdio = self.text.startswith(STDIO_PREFIX)
        if self.stdio and not self.text[len(STDIO_PREFIX) :].strip():
            raise ValueError(f"{self.text!r}: give the stdio bot's command after {STDIO_PREFIX}")

    def argv(self, seat_name: str) -> list[str]:
        """The command to spawn, placeholders not yet replaced."""
        if self.stdio:
            return bridge_argv(shlex.split(self.text[len(STDIO_PREFIX) :]), name=seat_name)
        return shlex.split(self.text)

    @property
    def name(self) -> str:
        """A short seat name: the command with folders cut to the last one.

        >>> BotSpec("clients/go/bot --misbehave").name
        'go/bot --misbehave'
        """
        words = [
            w if "/" not in w else "/".join(w.rstrip("/").split("/")[-2:])
            for w in shlex.split(self.text)
        ]
        return " ".join(words)[:60]

    def __repr__(self) -> str:
        return f"BotSpec({self.text!r})"


def distinct_names(names: Sequence[str]) -> list[str]:
    """Seat names with repeats told apart, so four copies of a bot are four names.

    >>> distinct_names(["greedy", "random", "greedy", "greedy"])
    ['greedy-1', 'random', 'greedy-2', 'greedy-3']
    """
    taken = {n for n in names if names.count(n) == 1}
    out = []
    for n in names:
        if n not in taken:
            k = 1
            while f"{n}-{k}" in taken:
                k += 1
            n = f"{n}-{k}"
            taken.add(n)
        out.append(n)
    return out


async def _create_match(
    stub: match_service_grpc.MatchServiceAsyncStub, request: match_service.CreateMatchRequest
) -> match_service.CreateMatchResponse:
    try:
        return await stub.CreateMatch(request)
    except grpc.aio.AioRpcError as exc:
        raise MatchSetupError(f"the referee refused the match: {exc.details()}") from exc


async def play_match(
    bots: Sequence[str],
    *,
    profile: str,
    options: Mapping[str, str] | None = None,
    seed: str = "",
    hands: int = 0,
    threshold: int = 0,
    log_dir: Path = Path("matches"),
    turn_time_ms: int = 0,
    connect_timeout_ms: int = 0,
    time_bank_ms: int = 0,
    max_rejections: int = 0,
    max_strikes: int = 0,
    max_actions_out_of_turn: int = 0,
    drill_disconnect_after_prompts: int = 0,
    address: str = "127.0.0.1:0",
    signer: LogSigner | None = None,
) -> LocalMatchResult:
    """Start a referee, seat four bots, play one match, stop everything."""
    specs = [BotSpec(b) for b in bots]
    if len(specs) != 4:
        raise ValueError(f"a match needs 4 bots, got {len(specs)}")
    names = distinct_names([s.name for s in specs])
    server = RefereeServer(address, log_dir, signer=signer)
    try:
        await server.start()
    except OSError as exc:
        raise MatchSetupError(str(exc)) from exc
    procs: list[BotProcess] = []
    tasks: list[asyncio.Task[object]] = []
    try:
        async with server.organiser_channel() as channel:
            stub = match_service_grpc.MatchServiceStub(channel)
            created = await _create_match(
                stub,
                match_service.CreateMatchRequest(
                    profile=profile,
                    options=dict(options or {}),
                    seat_names=names,
                    seed=seed,
                    hands=hands,
                    threshold=threshold,
                    time_control=common.TimeControl(
                        connect_timeout_ms=connect_timeout_ms,
                        turn_time_ms=turn_time_ms,
                        time_bank_ms=time_bank_ms,
                    ),
                    fault_policy=common.FaultPolicy(
                        max_rejections_per_turn=max_rejections,
                        max_strikes=max_strikes,
                        max_actions_out_of_turn=max_actions_out_of_turn,
                    ),
                    drills=common.Drills(disconnect_after_prompts=drill_disconnect_after_prompts),
                ),
            )
            match_id = created.match_id
            for seat, (spec, token) in enumerate(zip(specs, created.seat_tokens, strict=True)):
                if spec.builtin:
                    bot = builtin_bot(spec.text)
                    tasks.append(asyncio.create_task(play_seat(bot, server.address, token)))
                else:
                    err = log_dir / f"{match_id}.seat{seat}.stderr"
                    argv = expand(
                        spec.argv(names[seat]), {"address": server.address, "token": token}
                    )
                    env = {"PUSOY_ADDRESS": server.address, "PUSOY_TOKEN": token}
                    try:
                        proc = await BotProcess.spawn(argv, env=env, cwd=None, stderr_path=err)
                    except OSError as exc:
                        raise BotStartError(f"cannot start bot {spec.text!r}: {exc}") from exc
                    procs.append(proc)
            await server.matches.wait_over(match_id)
            info = (await stub.GetMatch(match_service.GetMatchRequest(match_id=match_id))).match
        # Give the bots a moment to see the end, then stop them and their children.
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        for proc in procs:
            await proc.wait(5)
        return LocalMatchResult(match_id, info, server.matches.log_path(match_id))
    finally:
        for task in tasks:
            task.cancel()
        for proc in procs:
            await proc.stop(0)
        await server.stop(grace=1.0)
