"""A referee killed mid-match (SIGKILL) and started again: bots of a compiled starter kit
(Go) reconnect with their same tokens and finish the match; the log verifies end to end."""

from __future__ import annotations

import subprocess

from referee_process import Serve, kind_is, wait_for_line

from referee.log import read_log
from referee.log.verify import verify_log
from referee.protocol import common

from .conftest import build


def test_go_bots_survive_a_referee_restart(tmp_path):
    bot = build("go")
    serve = Serve(tmp_path)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        serve.start()
        created = serve.create(seed="go-restart", hands=2)
        log = tmp_path / "logs" / f"{created.match_id}.jsonl"
        bots = [
            subprocess.Popen(
                [str(bot), "--address", serve.address, "--token", token],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for token in created.seat_tokens
        ]
        wait_for_line(log, kind_is("played", 10))
        serve.kill()
        before = log.read_bytes()
        committed = before[: before.rfind(b"\n") + 1]
        resumed = serve.start()
        assert any(created.match_id in line and "resumed" in line for line in resumed)
        for b in bots:
            assert b.wait(120) == 0, (b.stderr.read() if b.stderr else b"").decode()[-2000:]
        assert log.read_bytes().startswith(committed)
        report = verify_log(log)
        assert report.ok, report.summary()
        lines = read_log(log).lines
        assert [ln.kind for ln in lines].count("referee_restarted") == 1
        assert lines[-1].entry.event.match_ended.status == common.MATCH_STATUS_FINISHED
    finally:
        for b in bots:
            if b.poll() is None:
                b.kill()
        serve.stop()
