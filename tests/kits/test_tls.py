"""A cross-language table over TLS and over mutual TLS, on a real socket: `referee serve`
with a certificate of a CA the test makes (nothing is turned off in the checks), two Go
bots and two Python kit bots that trust that CA (and, for mutual TLS, show client
certificates it issued). Without a client certificate, mutual TLS lets no bot in."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from referee_process import Serve

from referee.client.tls import ClientTls
from referee.log import read_log
from referee.log.signing import load_public_key
from referee.log.verify import verify_log
from referee.protocol import common

from ..server.certs import TestCA
from .conftest import ROOT, build

PYTHON_KIT_BOT = ROOT / "clients" / "python" / "bot"


@pytest.mark.parametrize("mutual", [False, True], ids=["tls", "mutual-tls"])
def test_go_and_python_kits_play_a_table_over_tls(tmp_path: Path, mutual: bool) -> None:
    go_bot = build("go")
    ca = TestCA(tmp_path / "pki")
    server, client = ca.server(), ca.client()
    args = ["--tls-cert", str(server.cert), "--tls-key", str(server.key)]
    if mutual:
        args += ["--tls-client-ca", str(ca.path)]
    serve = Serve(
        tmp_path,
        args=args,
        tls=ClientTls(ca.path, client.cert, client.key) if mutual else ClientTls(ca.path),
    )
    kit_tls = ["--tls-ca", str(ca.path)]
    if mutual:
        kit_tls += ["--tls-cert", str(client.cert), "--tls-key", str(client.key)]
    bots: list[subprocess.Popen[bytes]] = []
    try:
        serve.start()
        created = serve.create(seed=f"tls {mutual}", hands=2)
        if mutual:  # the CA alone is not enough: the referee wants a client certificate
            done = subprocess.run(
                [
                    *(str(go_bot), "--address", serve.address),
                    *("--token", created.seat_tokens[0], "--tls-ca", str(ca.path)),
                    *("--reconnect-window-ms", "1500"),
                ],
                capture_output=True,
                timeout=60,
                check=False,
            )
            assert done.returncode == 3, done.stderr.decode()[-2000:]  # no seat in the window
        for seat, token in enumerate(created.seat_tokens):
            launcher = go_bot if seat % 2 == 0 else PYTHON_KIT_BOT
            bots.append(
                subprocess.Popen(
                    [str(launcher), "--address", serve.address, "--token", token, *kit_tls],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
            )
        for b in bots:
            assert b.wait(120) == 0, (b.stderr.read() if b.stderr else b"").decode()[-2000:]
    finally:
        for b in bots:
            if b.poll() is None:
                b.kill()
        serve.stop()
    log = tmp_path / "logs" / f"{created.match_id}.jsonl"
    report = verify_log(log, load_public_key(tmp_path / "state" / "signing-key.pub"))
    assert report.ok and report.key_checked, report.summary()
    lines = read_log(log).lines
    assert lines[-1].entry.event.match_ended.status == common.MATCH_STATUS_FINISHED
    connected = [ln.entry.event.seat_connected for ln in lines if ln.kind == "seat_connected"]
    assert sorted({c.seat for c in connected}) == [0, 1, 2, 3]
