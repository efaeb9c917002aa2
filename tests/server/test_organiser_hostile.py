"""``referee organiser`` against a referee that lies: a fake MatchService on a real socket.

The fake answers what no honest referee does (five seat tokens, a token holding a
newline or an escape, strings that drive a terminal, a log stream without end, a log
signed by a key of its own) and the command, run as a person runs it, must refuse it
without writing a token or a log, print nothing raw, and keep its memory bounded.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from referee_cli import ROOT

from referee.client.organiser import MAX_FETCHED_LOG_BYTES, BadReply, Organiser, Target
from referee.log.signing import LogSigner
from referee.match.settings import MatchSettings
from referee.protocol import common, match_service, match_service_grpc
from referee.rules import Rules
from referee.server.app import RefereeServer
from referee.server.host import DEFAULT_MAX_LOG_BYTES
from referee.table.referees import RefereeUnavailable, ServerReferee

from .conftest import create

MATCH_ID = "20261202-101500-1a2b3c4d"
TOKENS = [f"{i}" * 48 for i in range(4)]
ESC = "\x1b"


@dataclass
class Lies:
    """What the fake referee answers."""

    seat_tokens: list[str] = field(default_factory=lambda: list(TOKENS))
    match_id: str = MATCH_ID
    text: str = "ok"
    """Put into every free-text field of every reply."""
    status: int = common.MATCH_STATUS_FINISHED
    public_key: str = ""
    log_lines: list[str] = field(default_factory=list)
    endless_line_bytes: int = 0
    """Stream lines of this size without end (0: stream ``log_lines``)."""
    refusal: str = ""
    """Refuse GetMatch with these details."""


class FakeReferee(match_service_grpc.MatchServiceServicer):
    def __init__(self, lies: Lies) -> None:
        self.lies = lies
        self.streamed = 0

    def _info(self) -> match_service.MatchInfo:
        lies = self.lies
        info = match_service.MatchInfo(
            match_id=lies.match_id,
            status=lies.status,  # type: ignore[arg-type]
            seed_commitment=lies.text,
            final_hash=lies.text,
            failure=lies.text,
            log_lines=3,
            connected=[True, False],
            totals=[1, 2, 3, 4, 5, 6],
        )
        info.config.seat_names.extend([lies.text, "b"])
        info.standings.add(place=1, seats=[0, 7], total=3)
        return info

    async def CreateMatch(self, request: Any, context: Any) -> Any:
        return match_service.CreateMatchResponse(
            match_id=self.lies.match_id,
            seat_tokens=self.lies.seat_tokens,
            seed_commitment=self.lies.text,
            match=self._info(),
        )

    async def GetMatch(self, request: Any, context: Any) -> Any:
        if self.lies.refusal:
            await context.abort(grpc.StatusCode.NOT_FOUND, self.lies.refusal)
        return match_service.GetMatchResponse(match=self._info())

    async def ListMatches(self, request: Any, context: Any) -> Any:
        return match_service.ListMatchesResponse(matches=[self._info()])

    async def CancelMatch(self, request: Any, context: Any) -> Any:
        return match_service.CancelMatchResponse(match=self._info())

    async def GetServerInfo(self, request: Any, context: Any) -> Any:
        return match_service.GetServerInfoResponse(
            software_version=self.lies.text,
            signing_algorithm=self.lies.text,
            signing_public_key=self.lies.public_key or self.lies.text,
            protocol_versions=[1],
        )

    async def GetMatchLog(self, request: Any, context: Any) -> AsyncIterator[Any]:
        size = self.lies.endless_line_bytes
        if not size:
            for line in self.lies.log_lines:
                yield match_service.GetMatchLogResponse(line=line)
            return
        line = "x" * size
        while True:
            self.streamed += size + 1
            yield match_service.GetMatchLogResponse(line=line)


@pytest.fixture
async def fake() -> AsyncIterator[tuple[FakeReferee, str]]:
    servicer = FakeReferee(Lies())
    server = grpc.aio.server()
    match_service_grpc.add_MatchServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield servicer, f"127.0.0.1:{port}"
    finally:
        await server.stop(grace=0)


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str
    max_rss_kb: int


def _run_measured(argv: list[str], cwd: Path) -> Ran:
    """A process run to its end, and its peak resident memory (wait4's, its own only)."""
    out, err = cwd / ".out", cwd / ".err"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PUSOY_ADDRESS", None)
    env.pop("PUSOY_ORGANISER_TOKEN_FILE", None)
    with out.open("w") as o, err.open("w") as e:
        proc = subprocess.Popen(argv, stdout=o, stderr=e, cwd=cwd, env=env, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return Ran(proc.returncode, out.read_text(), err.read_text(), usage.ru_maxrss)


async def organiser(address: str, *args: str, cwd: Path) -> Ran:
    """``referee organiser ...`` in a process of its own, while this loop serves the fake."""
    (cwd / "token").write_text("t" * 40 + "\n")
    argv = [sys.executable, "-m", "referee.cli", "organiser", *args]
    argv += ["--address", address, "--token-file", str(cwd / "token")]
    return await asyncio.to_thread(_run_measured, argv, cwd)


def files_in(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.name not in (".out", ".err", "token")}


BAD_REPLIES = [
    ([*TOKENS, "4" * 48], MATCH_ID, "it holds 5 seat tokens, not 4"),
    (TOKENS[:3], MATCH_ID, "it holds 3 seat tokens, not 4"),
    ([TOKENS[0], "ab\ncd", *TOKENS[2:]], MATCH_ID, "seat 1's token is not a plain token"),
    ([*TOKENS[:3], f"ab{ESC}[2Jcd"], MATCH_ID, "seat 3's token is not a plain token"),
    ([*TOKENS[:3], "é" * 8], MATCH_ID, "outside ASCII"),
    ([*TOKENS[:3], "a" * 65], MATCH_ID, "over 64 characters"),
    (TOKENS, f"{ESC}]0;pwned\a", "its match id is not a plain id"),
]


async def test_the_client_refuses_every_reply_that_is_not_four_plain_tokens(fake):
    servicer, address = fake
    async with Organiser(Target(address, "t" * 40)) as org:
        for tokens, match_id, why in BAD_REPLIES:
            servicer.lies.seat_tokens, servicer.lies.match_id = tokens, match_id
            with pytest.raises(BadReply, match=why):
                await org.create(match_service.CreateMatchRequest(profile="big-two"))
        servicer.lies.seat_tokens, servicer.lies.match_id = TOKENS, MATCH_ID
        assert list((await org.create(match_service.CreateMatchRequest())).seat_tokens) == TOKENS


@pytest.mark.parametrize(("tokens", "match_id", "why"), [BAD_REPLIES[i] for i in (0, 2, 6)])
async def test_create_refuses_it_with_exit_2_and_writes_no_token(
    fake, tmp_path, tokens, match_id, why
):
    servicer, address = fake
    servicer.lies.seat_tokens, servicer.lies.match_id = tokens, match_id
    ways = (("--tokens-dir", "seats"), ("--json",), ()) if len(tokens) == 5 else ((),)
    for extra in ways:
        ran = await organiser(address, "create", *extra, cwd=tmp_path)
        assert ran.returncode == 2, ran
        assert "CreateMatch reply is refused" in ran.stderr and why in ran.stderr
        assert ran.stdout == "" and ESC not in ran.stderr
        assert files_in(tmp_path) == set()  # no token file, no folder for them


async def test_what_the_referee_says_is_printed_escaped(fake, tmp_path):
    servicer, address = fake
    servicer.lies.text = f"v9{ESC}]0;pwned\a{ESC}[2J\u202egpj.exe\nfake line"
    servicer.lies.status = 99  # a status this version does not know
    seen = []
    for args in (("info",), ("list",), ("show", MATCH_ID), ("cancel", MATCH_ID)):
        ran = await organiser(address, *args, cwd=tmp_path)
        assert ran.returncode == 0, ran
        seen.append(ran.stdout)
    text = "".join(seen)
    for raw in (ESC, "\a", "\u202e", "\nfake line"):
        assert raw not in text
    assert "v9\\x1b]0;pwned\\x07\\x1b[2J\\u202egpj.exe\\x0afake line" in text
    assert "status 99" in text  # and not a crash
    servicer.lies.refusal = f"no such match{ESC}[1A{ESC}[2K"
    refused = await organiser(address, "show", MATCH_ID, cwd=tmp_path)
    assert refused.returncode == 2
    assert "GetMatch: NOT_FOUND: no such match\\x1b[1A" in refused.stderr
    assert ESC not in refused.stderr


async def test_a_log_stream_without_end_is_dropped_in_bounded_memory(fake, tmp_path):
    servicer, address = fake
    servicer.lies.endless_line_bytes = 1024 * 1024
    key = LogSigner.ephemeral().public_key_text
    baseline = await organiser(address, "info", cwd=tmp_path)
    ran = await organiser(
        address, "log", MATCH_ID, "-o", "game.jsonl", "--public-key", key, cwd=tmp_path
    )
    assert ran.returncode == 1, ran
    assert "not saved (game.jsonl was not written)" in ran.stdout
    assert "more than" in ran.stdout and "not a log" in ran.stdout
    assert files_in(tmp_path) == set()  # neither the log nor its temporary file
    assert servicer.streamed > 64 * 1024 * 1024  # it read up to the bound, not less
    # A 65 MB stream held whole would be 65 MB more at least; streamed to disk, a few.
    assert ran.max_rss_kb - baseline.max_rss_kb < 32 * 1024, (ran.max_rss_kb, baseline)


def test_the_client_takes_every_log_a_referee_keeps():
    """The client's bound is its own (it imports nothing of the server), so it is held
    here above the server's cap with room for the last decision, the end and the trailer."""
    assert MAX_FETCHED_LOG_BYTES - DEFAULT_MAX_LOG_BYTES >= 512 * 1024


@pytest.fixture(scope="module")
def signed_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], str]:
    """A real referee's log (a match created and cancelled) and its public key."""
    folder = tmp_path_factory.mktemp("signed")

    async def make() -> tuple[list[str], str]:
        server = RefereeServer("127.0.0.1:0", folder / "logs", signer=LogSigner.ephemeral())
        await server.start()
        try:
            async with server.organiser_channel() as channel:
                stub = match_service_grpc.MatchServiceStub(channel)
                created = await create(stub)
                await stub.CancelMatch(match_service.CancelMatchRequest(match_id=created.match_id))
            path = server.registry.log_path(created.match_id)
        finally:
            await server.stop(grace=0)
        return path.read_text().splitlines(), server.signer.public_key_text

    return asyncio.run(make())


@pytest.fixture
def served_log(fake, signed_log) -> Iterator[tuple[str, str]]:
    servicer, address = fake
    lines, key = signed_log
    servicer.lies.log_lines, servicer.lies.public_key = lines, key
    servicer.lies.match_id = lines[0].split('"match_id":"')[1].split('"')[0]
    yield address, key


async def test_a_log_is_kept_only_once_it_verifies_and_the_output_names_the_key(
    served_log, signed_log, tmp_path
):
    address, key = served_log
    lines, _ = signed_log
    mine = LogSigner.ephemeral().public_key_text  # the key the organiser trusts
    (tmp_path / "mine.pub").write_text(mine + "\n")

    trusted = await organiser(address, "log", MATCH_ID, "-o", "a.jsonl", cwd=tmp_path)
    assert trusted.returncode == 0, trusted
    assert (tmp_path / "a.jsonl").read_text().splitlines() == lines
    assert f"Key: {key}, as the referee at {address} publishes it" in trusted.stdout
    assert "pin the key you trust with --public-key" in trusted.stdout

    # The same log, signed by a key other than the one pinned: refused, nothing kept.
    for pin in (mine, "mine.pub"):
        forged = await organiser(
            address, "log", MATCH_ID, "-o", "b.jsonl", "--public-key", pin, cwd=tmp_path
        )
        assert forged.returncode == 1, forged
        assert "FAILED" in forged.stdout and "not saved (b.jsonl was not written)" in forged.stdout
        assert f"Key: {mine}, pinned with --public-key" in forged.stdout
        assert files_in(tmp_path) == {"a.jsonl", "mine.pub"}

    pinned = await organiser(
        address, "log", MATCH_ID, "-o", "c.jsonl", "--public-key", key, "--json", cwd=tmp_path
    )
    assert pinned.returncode == 0, pinned
    assert '"key_pinned": true' in pinned.stdout and '"verified": true' in pinned.stdout
    nowhere = await organiser(address, "log", MATCH_ID, "-o", "no/such/d.jsonl", cwd=tmp_path)
    assert (
        nowhere.returncode == 2 and "cannot write the log beside no/such/d.jsonl" in nowhere.stderr
    )


async def test_a_log_line_holding_a_line_break_is_refused(served_log, signed_log, fake, tmp_path):
    address, key = served_log
    servicer, _ = fake
    lines, _ = signed_log
    servicer.lies.log_lines = [lines[0] + "\n" + lines[0], *lines[1:]]
    ran = await organiser(address, "log", MATCH_ID, "--public-key", key, cwd=tmp_path)
    assert ran.returncode == 1, ran
    assert "line 1 holds a line break" in ran.stdout
    assert files_in(tmp_path) == set()


async def test_a_tournament_on_a_lying_referee_stops_instead_of_seating_its_tokens(fake, tmp_path):
    """The table's client of a `referee serve` (tournaments with `[referee] server`)
    checks the same replies: a fifth token, or a log line holding a line break, stops the
    tournament (it can resume elsewhere) before anything is seated or kept."""
    servicer, address = fake
    referee = ServerReferee(address, "t" * 40)
    await referee.start()
    try:
        servicer.lies.seat_tokens = [*TOKENS, "4" * 48]
        with pytest.raises(RefereeUnavailable, match="5 seat tokens, not 4"):
            await referee.create(MatchSettings(Rules.for_profile("big-two")))
        servicer.lies.log_lines = ['{"a": 1}\n{"b": 2}']
        with pytest.raises(RefereeUnavailable, match="holds a line break"):
            await referee.collect_log(MATCH_ID, tmp_path / "kept.jsonl")
        assert files_in(tmp_path) == set()
    finally:
        await referee.stop()
