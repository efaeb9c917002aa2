"""``referee stdio-bot`` on its own: stdio bots joining a running ``referee serve``, and the
bridge's exit statuses."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from referee.client.channels import bearer_metadata
from referee.log.verify import verify_log
from referee.protocol import match_service, match_service_grpc

from .conftest import ROOT, build_samples, referee

BRIDGE = [sys.executable, "-m", "referee.cli", "stdio-bot"]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    serve = ["serve", "--address", "127.0.0.1:0", "--log-dir", str(tmp_path / "logs")]
    serve += ["--state-dir", str(tmp_path / "state")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", *serve],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # "referee listening on HOST:PORT; logs in ..."
        assert line.startswith("referee listening on "), line
        yield line.split()[3].rstrip(";")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def create_match(address: str, state: Path, **fields) -> match_service.CreateMatchResponse:
    """As the organiser: with the token the server keeps in its state folder."""
    token = (state / "organiser-token").read_text().strip()
    with grpc.insecure_channel(address) as channel:
        stub = match_service_grpc.MatchServiceStub(channel)
        return stub.CreateMatch(  # type: ignore[no-any-return]
            match_service.CreateMatchRequest(**fields),
            timeout=10,
            metadata=bearer_metadata(token),
        )


def with_token(token: str) -> dict[str, str]:
    """The environment of a bridge given its seat token as a user should give it: in
    PUSOY_TOKEN (``--token`` works too, but every user of the machine reads it in ps)."""
    return {**os.environ, "PUSOY_TOKEN": token}


def test_four_remote_stdio_bots_play_a_match_on_a_server(server, tmp_path):
    samples = build_samples()
    created = create_match(server, tmp_path / "state", profile="pusoy-dos", seed="remote", hands=2)
    commands = [samples["c"], samples["perl"], samples["c"], samples["perl"]]
    bots = [
        subprocess.Popen(
            [*BRIDGE, "--address", server, "--", *command.split()],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=with_token(token),
        )
        for token, command in zip(created.seat_tokens, commands, strict=True)
    ]
    for bot in bots:
        _, err = bot.communicate(timeout=240)
        assert bot.returncode == 0, err
        assert "exit 0 (match over)" in err
    report = verify_log(tmp_path / "logs" / f"{created.match_id}.jsonl")
    assert report.ok, report.summary()


def test_a_bad_token_is_refused_with_status_2(server, tmp_path):
    build_samples()
    done = subprocess.run(
        [*BRIDGE, "--address", server, "--", str(ROOT / "clients/stdio/c/bot")],
        capture_output=True,
        text=True,
        env=with_token("not-a-token"),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "REFUSAL_REASON_BAD_TOKEN" in done.stderr


def test_a_seat_another_bridge_holds_is_retried_for_the_window_then_refused(server, tmp_path):
    """SEAT_TAKEN before the first Welcome is retried (the referee may not have seen an
    earlier stream's end: docs/kits.md, section 6); for a whole window it is a refusal,
    which the bot reads before its stdin closes."""
    created = create_match(server, tmp_path / "state", profile="pusoy-dos", seed="held", hands=1)
    token = created.seat_tokens[0]
    quiet = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    holder = subprocess.Popen(
        [*BRIDGE, "--address", server, "--", *quiet],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=with_token(token),
    )
    try:
        with grpc.insecure_channel(server) as channel:  # until the holder has the seat
            stub = match_service_grpc.MatchServiceStub(channel)
            request = match_service.GetMatchRequest(match_id=created.match_id)
            deadline = time.monotonic() + 60
            while not stub.GetMatch(request, timeout=10).match.connected[0]:
                assert time.monotonic() < deadline, "the first bridge never took the seat"
                time.sleep(0.1)
        echo = "import sys; print('READ', sys.stdin.read(), file=sys.stderr)"
        bot = [sys.executable, "-c", echo]
        started = time.monotonic()
        second = subprocess.run(
            [
                *BRIDGE,
                "--address",
                server,
                "--reconnect-window-s=1",
                "--",
                *bot,
            ],
            capture_output=True,
            text=True,
            env=with_token(token),
            timeout=60,
            check=False,
        )
        took = time.monotonic() - started
    finally:
        holder.terminate()
        holder.communicate(timeout=30)
    assert second.returncode == 2, second.stderr
    assert "the referee refused the seat: REFUSAL_REASON_SEAT_TAKEN" in second.stderr
    read = second.stderr.split("READ", 1)[1]
    assert '"refusal"' in read and "REFUSAL_REASON_SEAT_TAKEN" in read
    retries = re.search(r"(\d+) reconnects", second.stderr)
    assert retries is not None and int(retries[1]) >= 1 and took >= 1.0


def test_an_unreachable_referee_is_status_3():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before the bridge tries it
    done = referee(
        "stdio-bot",
        "--address",
        f"127.0.0.1:{port}",
        "--token",
        "t",
        "--reconnect-window-s",
        "1",
        "--",
        sys.executable,
        "-c",
        "import sys; sys.stdin.read()",
        timeout=60,
    )
    assert done.returncode == 3, done.stderr
    assert "could not reach the referee" in done.stderr


def test_a_bot_that_cannot_start_is_status_127():
    done = referee("stdio-bot", "--token", "t", "--", "/nonexistent/bot", timeout=60)
    assert done.returncode == 127
    assert "cannot start /nonexistent/bot" in done.stderr


def test_help_has_examples():
    done = referee("stdio-bot", "--help")
    assert done.returncode == 0 and "examples:" in done.stdout and "Exit status" in done.stdout


def test_usage_errors_are_status_2():
    assert referee("stdio-bot", "--token", "t").returncode == 2  # no command
    no_token = subprocess.run(
        [*BRIDGE, "--", "true"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert no_token.returncode == 2 and "seat token is needed" in no_token.stderr
