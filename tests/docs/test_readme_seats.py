"""The README's organiser loop works as written: ``referee serve``, ``organiser create
--tokens-dir``, four bot processes taking the seats (three ``referee bot``, the Python
kit's sample bot), ``organiser log --wait`` and ``verify``.

The README's ``sh serve`` block runs in the background and its ``sh seats`` block in bash,
in a fresh folder that looks like the checkout (``.venv`` and ``clients`` linked in), with
the address ``127.0.0.1:50051`` replaced by a free port: real processes over real sockets.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time

from referee_cli import ROOT
from referee_process import free_port

README = ROOT / "README.md"
FENCE = re.compile(r"^```sh (\w+)\n(.*?)^```", re.S | re.M)
DOC_ADDRESS = "127.0.0.1:50051"


def blocks() -> dict[str, str]:
    return {m.group(1): m.group(2) for m in FENCE.finditer(README.read_text(encoding="utf-8"))}


def test_the_readme_organiser_loop_fills_the_seats_and_verifies(tmp_path):
    found = blocks()
    address = f"127.0.0.1:{free_port()}"
    serve_cmd, seats = (found[k].replace(DOC_ADDRESS, address) for k in ("serve", "seats"))
    for name in (".venv", "clients"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSOY_")}
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        server = subprocess.Popen(
            ["bash", "-c", "exec " + serve_cmd.strip()],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    organiser = None
    try:
        deadline = time.monotonic() + 60
        while f"listening on {address}" not in log.read_text():
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        organiser = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", seats],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        out, err = organiser.communicate(timeout=120)
        assert organiser.returncode == 0, out + err
    finally:
        for proc in (organiser, server):  # the block's background bots are in its group
            if proc is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        server.wait(20)

    # The match was played by the four bots, none of them by the referee.
    game = tmp_path / "game.jsonl"
    entries = [json.loads(x) for x in game.read_text().splitlines() if x.startswith('{"match')]
    names = [
        e["event"]["seat_connected"].get("bot_name")
        for e in entries
        if "seat_connected" in e["event"]
    ]
    assert sorted(names) == ["greedy", "greedy", "greedy", "python-sample"]
    assert not any(
        e["event"].get(kind, {}).get("default_cause")
        for e in entries
        for kind in ("played", "passed")
    )
    ended = entries[-1]["event"]["match_ended"]
    assert ended["status"] == "MATCH_STATUS_FINISHED"
    # Each bot said how its seat ended; the log fetched verified twice with the key.
    for seat in range(4):
        assert re.search(rf"match {entries[0]['match_id']} over, seat {seat} placed \d", out)
    key = (tmp_path / ".referee" / "signing-key.pub").read_text().strip()
    assert (
        out.count(f"OK: game.jsonl: {len(entries)} lines, 2 hands verified, signed by {key}") == 2
    )
    # The tokens were written for their owner alone and never printed.
    tokens = [(tmp_path / "seats" / f"seat-{i}.token") for i in range(4)]
    assert all(t.stat().st_mode & 0o077 == 0 for t in tokens)
    assert not any(t.read_text().strip() in out + err for t in tokens)
