"""``referee organiser``: an organiser runs matches on a ``referee serve`` from the shell.

A real server on a real socket, the four bots example programs of their own, and the
command run as a person runs it; the log it fetches verifies with the server's key."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from referee_cli import ROOT, run_referee
from referee_process import Serve, free_port


def organiser(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_referee("organiser", *args, cwd=cwd, env=env)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Serve]:
    serve = Serve(tmp_path)
    serve.start()
    try:
        yield serve
    finally:
        serve.stop()


def test_an_organiser_creates_follows_and_fetches_a_verified_match(tmp_path, server):
    at = ("--address", server.address, "--token-file", str(tmp_path / "state/organiser-token"))
    info = organiser("info", "--json", *at[:2], cwd=tmp_path)  # public: no token needed
    assert info.returncode == 0, info.stderr
    key = json.loads(info.stdout)["signing_public_key"]

    made = organiser(
        "create", *at, "--hands", "1", "--profile", "big-two", "--turn-time-ms", "3000",
        *("--name", "ann", "--name", "bob", "--name", "cy", "--name", "di"),
        "--tokens-dir", "seats", cwd=tmp_path,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    match_id = made.stdout.split()[1]
    tokens = [tmp_path / "seats" / f"seat-{i}.token" for i in range(4)]
    assert all(stat.S_IMODE(t.stat().st_mode) == 0o600 for t in tokens)
    assert not any(t.read_text().strip() in made.stdout for t in tokens)  # written, not shown

    waiting = organiser("list", *at, "--status", "waiting", cwd=tmp_path)
    assert waiting.returncode == 0, waiting.stderr
    assert match_id in waiting.stdout and "ann, bob, cy, di" in waiting.stdout

    def bot(token: Path) -> subprocess.Popen[bytes]:
        argv = [sys.executable, str(ROOT / "examples/random_bot.py")]
        argv += ["--address", server.address, "--token", token.read_text().strip()]
        return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    bots = [bot(t) for t in tokens]
    try:
        fetched = organiser("log", match_id, "--wait", "-o", "game.jsonl", *at, cwd=tmp_path)
    finally:
        for bot in bots:
            bot.wait(60)
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    assert f"signed by {key}" in fetched.stdout and fetched.stdout.count("OK: ") == 1
    assert "finished" in fetched.stderr  # the progress of the match, on stderr
    verified = run_referee("verify", "--public-key", key, "game.jsonl", cwd=tmp_path)
    assert verified.returncode == 0 and verified.stdout.startswith("OK: "), verified.stdout
    # The log fetched is the server's own, byte for byte.
    assert (tmp_path / "game.jsonl").read_bytes() == (
        tmp_path / "logs" / f"{match_id}.jsonl"
    ).read_bytes()

    shown = organiser("show", match_id, "--json", *at[:2], cwd=tmp_path)  # public: no token
    assert shown.returncode == 0, shown.stderr
    match = json.loads(shown.stdout)
    assert match["status"] == "MATCH_STATUS_FINISHED" and match["final_hash"]
    assert match["config"]["seat_names"] == ["ann", "bob", "cy", "di"]
    assert match["config"]["rules"]["profile"] == "big-two"
    text = organiser("show", match_id, *at[:2], cwd=tmp_path).stdout
    assert f"final hash {match['final_hash']}" in text and "1. " in text

    # The token from the environment, as `referee serve` takes it.
    env = {"PUSOY_ORGANISER_TOKEN_FILE": at[3]}
    done = organiser("list", *at[:2], "--status", "finished", "--json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert [m["match_id"] for m in json.loads(done.stdout)["matches"]] == [match_id]


def test_refusals_are_clear_and_change_nothing(tmp_path, server):
    address = ("--address", server.address)
    token = ("--token-file", str(tmp_path / "state/organiser-token"))

    none = organiser("list", *address, cwd=tmp_path)  # no .referee/organiser-token here
    assert none.returncode == 2
    assert "no organiser token: .referee/organiser-token is absent" in none.stderr
    (tmp_path / "wrong").write_text("not-the-token\n")
    wrong = organiser("create", *address, "--token-file", "wrong", cwd=tmp_path)
    assert wrong.returncode == 2
    assert "CreateMatch: PERMISSION_DENIED" in wrong.stderr and "read from wrong" in wrong.stderr
    bad = organiser("create", *address, *token, "--revolution", "maybe", cwd=tmp_path)
    assert bad.returncode == 2 and "revolution" in bad.stderr
    names = organiser("create", *address, *token, "--name", "solo", cwd=tmp_path)
    assert names.returncode == 2 and "give 4 seat names" in names.stderr
    assert organiser("list", *address, *token, cwd=tmp_path).stdout == "No matches.\n"

    unknown = organiser("show", "no-such-match", *address, cwd=tmp_path)
    assert unknown.returncode == 2 and "GetMatch: NOT_FOUND" in unknown.stderr
    gone = organiser("info", "--address", f"127.0.0.1:{free_port()}", cwd=tmp_path)
    assert gone.returncode == 2 and "cannot reach the referee at 127.0.0.1:" in gone.stderr
    tls = organiser("info", *address, "--tls-cert", "c.pem", cwd=tmp_path)
    assert tls.returncode == 2 and "needs its key" in tls.stderr

    made = organiser("create", *address, *token, "--json", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    created = json.loads(made.stdout)
    assert len(created["seat_tokens"]) == 4  # --json shows the tokens: they are the reply
    match_id = created["match_id"]
    # A match not over: its log so far, for the organiser only (it holds hidden cards).
    hidden = organiser("log", match_id, *address, "--token-file", "wrong", cwd=tmp_path)
    assert hidden.returncode == 2 and "GetMatchLog: PERMISSION_DENIED" in hidden.stderr
    so_far = organiser("log", match_id, *address, *token, "-o", "so-far.jsonl", cwd=tmp_path)
    assert so_far.returncode == 0, so_far.stderr
    assert "Log so far: so-far.jsonl" in so_far.stdout and "waiting" in so_far.stdout
    assert "match_created" in (tmp_path / "so-far.jsonl").read_text()
    cancelled = organiser("cancel", match_id, *address, *token, "--reason", "no bots", cwd=tmp_path)
    assert cancelled.returncode == 0 and f"Cancelled {match_id}." in cancelled.stdout
    again = organiser("cancel", match_id, *address, *token, cwd=tmp_path)
    assert again.returncode == 2 and "FAILED_PRECONDITION" in again.stderr
    # A cancelled match's log is complete and signed; --wait reports the cancellation.
    log = organiser("log", match_id, "--wait", *address, cwd=tmp_path)
    assert log.returncode == 1, log.stdout + log.stderr
    assert "OK: " in log.stdout and "cancelled" in log.stderr
    assert (tmp_path / f"{match_id}.jsonl").is_file()


def test_organiser_finds_a_local_serve_without_flags_and_says_so(tmp_path):
    """`referee serve` records where it listens in its state folder; `referee organiser`
    run in the same folder needs no flag, and says where each thing came from."""
    (tmp_path / "secret").mkdir(mode=0o700)
    argv = [
        *(sys.executable, "-m", "referee.cli", "serve", "--address", "127.0.0.1:0"),
        *("--log-dir", "logs", "--log-level", "error"),
        *("--organiser-token-file", "secret/token"),  # outside the state folder
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSOY_")}
    clean = {**env, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(argv, cwd=tmp_path, env=clean, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        address = line.split()[3].rstrip(";")
        record = tmp_path / ".referee" / "serving.json"
        assert stat.S_IMODE(record.stat().st_mode) == 0o600
        assert json.loads(record.read_text())["address"] == address

        info = organiser("info", cwd=tmp_path, env=clean)
        assert info.returncode == 0, info.stderr
        assert f"at {address}" in info.stdout
        assert (
            f"the referee at {address} (recorded in .referee/serving.json by referee serve, "
            f"pid {proc.pid}), the token in {tmp_path / 'secret/token'} (recorded in "
            ".referee/serving.json), plaintext"
        ) in info.stderr
        made = organiser("create", "--hands", "1", "--json", cwd=tmp_path, env=clean)
        assert made.returncode == 0, made.stderr  # the recorded token, to the recorded address

        # Flags first, then the environment; the recorded token goes to its address only.
        elsewhere = f"127.0.0.1:{free_port()}"
        flagged = organiser(
            "list", "--address", elsewhere, cwd=tmp_path, env={**clean, "PUSOY_ADDRESS": address}
        )
        assert flagged.returncode == 2
        assert "no organiser token: .referee/organiser-token is absent" in flagged.stderr
        from_env = organiser("info", cwd=tmp_path, env={**clean, "PUSOY_ADDRESS": elsewhere})
        assert from_env.returncode == 2
        assert f"the referee at {elsewhere} (PUSOY_ADDRESS)" in from_env.stderr
        assert "cannot reach the referee" in from_env.stderr
    finally:
        proc.terminate()
        proc.wait(30)
    assert proc.returncode == 0 and not record.exists()  # removed at exit

    # A record left by a referee that was killed is said to be stale and not used.
    record.write_text(json.dumps({**json.loads(line_record(address)), "pid": dead_pid()}))
    stale = organiser("info", cwd=tmp_path, env=clean)  # (whatever answers there, if any)
    assert "the referee at 127.0.0.1:50051 (the default)" in stale.stderr
    assert ".referee/serving.json is stale (referee serve, pid" in stale.stderr


def line_record(address: str) -> str:
    return json.dumps(
        {
            "address": address,
            "organiser_address": address,
            "tls": "off",
            "token_file": "/nonexistent",
            "pid": 0,
        }
    )


def dead_pid() -> int:
    """The number of a process that has ended (and been reaped)."""
    probe = subprocess.Popen(["true"])
    probe.wait()
    return probe.pid
