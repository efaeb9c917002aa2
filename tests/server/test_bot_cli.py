"""``referee bot NAME``: a built-in bot as a process of its own takes a seat on a real
``referee serve``, with the kits' settings and exit codes, and its token never on its
command line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from referee_cli import ROOT
from referee_process import Serve, free_port, kind_is, wait_for_line

from referee.cli import main
from referee.client.tls import ClientTls
from referee.log import read_log
from referee.log.signing import load_public_key
from referee.log.verify import verify_log
from referee.protocol import common, match_service, match_service_grpc

from .certs import TestCA


def bot_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "referee.cli", "bot", *args]


def clean_env(**more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSOY_")}
    return {**env, "PYTHONPATH": str(ROOT), **more}


def run_bot(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        bot_argv(*args),
        capture_output=True,
        text=True,
        env=env or clean_env(),
        timeout=60,
        check=False,
    )


def token_files(folder: Path, tokens: list[str]) -> list[Path]:
    folder.mkdir()
    paths = []
    for seat, token in enumerate(tokens):
        path = folder / f"seat-{seat}.token"
        path.write_text(token + "\n")
        path.chmod(0o600)
        paths.append(path)
    return paths


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Serve]:
    serve = Serve(tmp_path)
    serve.start()
    try:
        yield serve
    finally:
        serve.stop()


def test_four_bot_processes_play_a_match_over_mutual_tls(tmp_path):
    ca = TestCA(tmp_path / "pki")
    cert, client = ca.server(), ca.client()
    serve = Serve(
        tmp_path,
        args=[
            *("--tls-cert", str(cert.cert), "--tls-key", str(cert.key)),
            *("--tls-client-ca", str(ca.path)),
        ],
        tls=ClientTls(ca.path, client.cert, client.key),
    )
    tls_env = {"PUSOY_TLS_CA": str(ca.path), "PUSOY_ADDRESS": "set below"}
    bots: list[subprocess.Popen[str]] = []
    try:
        serve.start()
        created = serve.create(seed="bot cli", hands=2)
        paths = token_files(tmp_path / "seats", list(created.seat_tokens))
        tls_env["PUSOY_ADDRESS"] = serve.address
        # The CA alone does not let a bot in: mutual TLS wants its certificate (exit 3).
        alone = run_bot(
            "greedy", "--token-file", str(paths[0]), "--reconnect-window-ms", "1500",
            env=clean_env(**tls_env),
        )  # fmt: skip
        assert alone.returncode == 3, alone.stderr
        assert "could not reach the referee" in alone.stderr

        mutual = {**tls_env, "PUSOY_TLS_CERT": str(client.cert), "PUSOY_TLS_KEY": str(client.key)}
        for seat, path in enumerate(paths):
            if seat == 3:  # the token from the environment, the TLS files as flags
                argv = bot_argv("random", "--seed", "3", "--tls-ca", str(ca.path))
                argv += ["--tls-cert", str(client.cert), "--tls-key", str(client.key)]
                env = clean_env(PUSOY_TOKEN=created.seat_tokens[3], PUSOY_ADDRESS=serve.address)
            else:
                argv = bot_argv("greedy" if seat % 2 == 0 else "random", "--token-file", str(path))
                env = clean_env(**mutual)
            bots.append(
                subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            )
        # What every user of the machine sees in the process list holds no token: as
        # they start, and once all four have read theirs and connected with it.
        def no_token_shown() -> None:
            for b in bots:
                with open(f"/proc/{b.pid}/cmdline", "rb") as f:  # a zombie's reads empty
                    shown = f.read().decode()
                assert not any(t in shown for t in created.seat_tokens)

        no_token_shown()
        log = tmp_path / "logs" / f"{created.match_id}.jsonl"
        wait_for_line(log, kind_is("seat_connected", 4))
        no_token_shown()
        outs = [b.communicate(timeout=120) for b in bots]
        for b, (_, err) in zip(bots, outs, strict=True):
            assert b.returncode == 0, err.decode()[-2000:]
    finally:
        for b in bots:
            if b.poll() is None:
                b.kill()
        serve.stop()
    for seat, (out, _) in enumerate(outs):
        assert f"match {created.match_id} over, seat {seat} placed " in out.decode()
    log = tmp_path / "logs" / f"{created.match_id}.jsonl"
    report = verify_log(log, load_public_key(tmp_path / "state" / "signing-key.pub"))
    assert report.ok and report.key_checked, report.summary()
    lines = read_log(log).lines
    assert lines[-1].entry.event.match_ended.status == common.MATCH_STATUS_FINISHED
    names = [ln.entry.event.seat_connected.bot_name for ln in lines if ln.kind == "seat_connected"]
    assert sorted(names) == ["greedy", "greedy", "random", "random"]
    assert not any(ln.entry.event.played.default_cause for ln in lines if ln.kind == "played")


def test_bad_settings_are_refused_before_anything_is_sent(tmp_path, monkeypatch, capsys):
    for var in [v for v in os.environ if v.startswith("PUSOY_")]:
        monkeypatch.delenv(var)
    (tmp_path / "seat.token").write_text("a-token\n")
    at = ("--address", f"127.0.0.1:{free_port()}")  # nothing listens: nothing is tried

    def refused(*args: str) -> str:
        assert main(["bot", *args]) == 64
        return capsys.readouterr().err

    assert "visible to every user" in refused("greedy", *at, "--token", "a-token")
    assert "--token-file FILE" in refused("greedy", *at)
    assert "cannot read the seat token file" in refused("greedy", *at, "--token-file", "nope")
    assert "is not a seat token file" in refused("greedy", *at, "--token-file", str(tmp_path))
    assert "choose one of random, greedy" in refused("clever", *at)
    monkeypatch.setenv("PUSOY_RECONNECT_WINDOW_MS", "soon")
    assert "'soon'" in refused("greedy", *at, "--token-file", str(tmp_path / "seat.token"))
    monkeypatch.delenv("PUSOY_RECONNECT_WINDOW_MS")
    assert "needs its key" in refused("greedy", *at, "--tls-cert", "c.pem")


def test_refusals_get_the_kits_exit_codes(tmp_path, server):
    created = server.create(hands=1)
    paths = token_files(tmp_path / "seats", list(created.seat_tokens))
    at = ("--address", server.address)

    (tmp_path / "wrong").write_text("not-a-seat-token\n")
    wrong = run_bot("greedy", *at, "--token-file", str(tmp_path / "wrong"))
    assert wrong.returncode == 2 and "REFUSAL_REASON_BAD_TOKEN" in wrong.stderr

    # A seat another bot holds: SEAT_TAKEN for a whole reconnect window, then exit 2.
    holder = subprocess.Popen(
        bot_argv("greedy", *at, "--token-file", str(paths[0])),
        env=clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not server_sees_seat(server, created.match_id, 0):
            assert holder.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        taken = run_bot(
            "random", *at, "--token-file", str(paths[0]), "--reconnect-window-ms", "1000"
        )
        assert taken.returncode == 2 and "REFUSAL_REASON_SEAT_TAKEN" in taken.stderr
        assert holder.poll() is None  # the holder keeps its seat
    finally:
        holder.kill()
        holder.wait()

    gone = run_bot(
        "greedy", "--address", f"127.0.0.1:{free_port()}", "--token-file", str(paths[1]),
        "--reconnect-window-ms", "300",
    )  # fmt: skip
    assert gone.returncode == 3 and "could not reach the referee" in gone.stderr


def server_sees_seat(server: Serve, match_id: str, seat: int) -> bool:
    with grpc.insecure_channel(server.address) as channel:
        stub = match_service_grpc.MatchServiceStub(channel)
        reply = stub.GetMatch(match_service.GetMatchRequest(match_id=match_id))
    return bool(reply.match.connected[seat])
