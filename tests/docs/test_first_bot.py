"""docs/first-bot.md works as written: every snippet runs, in order, as a newcomer would.

The page's fenced blocks are run top to bottom as in one terminal, against real referees
over real sockets. The terminal starts in the checkout, with a home folder of its own (a
temporary one), and what a block leaves (its folder, the variables it exported, the
virtualenv it activated) carries on into the next, as a person's shell keeps it:

- ``python|js|go file=PATH`` blocks are saved to PATH, in the terminal's folder;
- ``sh`` blocks run in bash, stopping at the first failing command; ``./scripts/setup``
  and the ``pip install`` of grpcio-tools are the environment this test already runs
  in (./scripts/test installs both), so those lines are checked, not rerun;
- the ``sh serve`` block is started in the background and stopped at the end;
- the ``sh by-hand`` block is played as a person would, answering each prompt with the
  action lines of the ``json`` block that follows it.

The page keeps the bots out of the checkout: what it makes is in the home folder's
``firstbot``, and none of it in the checkout.

The address ``127.0.0.1:50051`` is replaced by a free port. grpcurl and npm's cache live
in the kits' per-user build cache (clients/build-cache.sh: ``first-bot/``), and the Go
module and build caches are the Go kit's there, so the first run on a machine downloads
and builds, and later runs (in any clone) take seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "first-bot.md"
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```", re.S | re.M)
DOC_ADDRESS = "127.0.0.1:50051"
STEP_TIMEOUT = 1500  # a cold Go build of grpcurl on a busy 2-core machine takes minutes


def doc_blocks() -> list[tuple[str, str, str, int]]:
    text = DOC.read_text(encoding="utf-8")
    return [
        (m.group(1), m.group(2).strip(), m.group(3), text.count("\n", 0, m.start()) + 1)
        for m in FENCE.finditer(text)
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def kit_cache(kit: str) -> Path:
    """The per-user build cache folder of ``kit`` (clients/build-cache.sh), as this
    session's environment (its HOME, XDG_CACHE_HOME, PUSOY_BUILD_CACHE) finds it."""
    script = ROOT / "clients" / "build-cache.sh"
    done = subprocess.run(
        ["bash", "-c", 'source "$0" && kit_cache "$1" "$2"', script, kit, ROOT / ".cache" / kit],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(done.stdout.strip())


def environment(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSOY_")}
    (tmp / "home").mkdir()
    cache, go = kit_cache("first-bot"), kit_cache("go")
    gopath = cache / "gopath"
    env.update(
        GOPATH=str(gopath),
        GOMODCACHE=str(go / "mod"),
        GOCACHE=str(go / "build"),
        GOFLAGS="-modcacherw -buildvcs=false",
        GOTOOLCHAIN="local",
        npm_config_cache=str(cache / "npm"),
        npm_config_update_notifier="false",
        npm_config_fund="false",
        npm_config_audit="false",
        npm_config_prefer_offline="true",
        PATH=f"{gopath / 'bin'}:{env.get('PATH', '')}",
        HOME=str(tmp / "home"),
    )
    env.pop("VIRTUAL_ENV", None)
    return env


ALREADY_HERE = {
    "./scripts/setup --run": lambda: (ROOT / ".venv" / "bin" / "referee").exists(),
    "python -m pip install grpcio-tools": lambda: (
        subprocess.run([ROOT / ".venv" / "bin" / "python", "-c", "import grpc_tools"]).returncode
        == 0
    ),
}
"""Lines of the page that install what this test already runs in: checked, not run."""

MADE = ("bot.py", "stub_bot.py", "bot.js", "package.json", "pusoy", "go", "match.json")
"""What the page makes in the bot's folder."""


class Newcomer:
    """Follows the page in one terminal: saves files, runs commands, keeps what it
    started; ``cwd`` and ``env`` are the terminal's, as the blocks leave them."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = environment(tmp)
        self.cwd = ROOT
        self.groups: list[int] = []
        self.server: subprocess.Popen[str] | None = None
        self.outputs: list[str] = []

    def text(self, body: str) -> str:
        return body.replace(DOC_ADDRESS, self.address)

    def run(self, body: str, line: int) -> str:
        kept = []
        for x in body.splitlines():
            command = x.split("#", 1)[0].strip()
            if command in ALREADY_HERE:  # what this test runs in; the rest of the block runs
                assert ALREADY_HERE[command](), f"first-bot.md:{line}: {command} is not done"
            else:
                kept.append(x)
        state = self.tmp / "terminal"
        # After the block, the folder and the variables it leaves, for the next one.
        script = "\n".join([*kept, f'pwd > "{state}.cwd"; env -0 > "{state}.env"'])
        proc = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", self.text(script)],
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        self.groups.append(proc.pid)
        started = time.monotonic()
        try:
            out, _ = proc.communicate(timeout=STEP_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
        assert proc.returncode == 0, f"first-bot.md:{line}: exit {proc.returncode}\n{out[-4000:]}"
        self.cwd = Path(Path(f"{state}.cwd").read_text().strip())
        pairs = Path(f"{state}.env").read_bytes().decode().split("\0")
        self.env = dict(p.split("=", 1) for p in pairs if "=" in p)
        self.outputs.append(out)
        print(f"first-bot.md:{line}: {time.monotonic() - started:.1f} s")  # shown with -s
        return out

    def save(self, name: str, body: str) -> None:
        path = self.cwd / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")

    def serve(self, body: str) -> None:
        log = self.tmp / "serve.log"
        with open(log, "w") as out:  # a file, not a pipe: a full pipe would stall the server
            self.server = subprocess.Popen(
                ["bash", "-c", "exec " + self.text(body).strip()],
                cwd=self.cwd,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while f"listening on {self.address}" not in log.read_text():
            assert self.server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)

    def play_by_hand(self, body: str, actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Type the doc's action lines in answer to each prompt, as a person would."""
        play = next(a for a in actions if "play" in a["action"])
        pass_ = next(a for a in actions if "pass" in a["action"])
        proc = subprocess.Popen(
            ["bash", "-c", self.text(body)],
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.groups.append(proc.pid)
        assert proc.stdin is not None and proc.stdout is not None
        seen: list[dict[str, Any]] = []
        typo_sent = False
        deadline = time.monotonic() + 120
        for msg in pretty_json_objects(proc.stdout):
            seen.append(msg)
            assert time.monotonic() < deadline, "the hand by hand takes too long"
            if "prompt" in msg:
                prompt = msg["prompt"]
                turn = int(prompt["turn_id"])
                if not typo_sent:  # a person's typo first: it is rejected, the turn stays
                    typo_sent = True
                    self.type(proc, with_turn(play, turn, cards=["9Z"]))
                if prompt.get("legal_plays"):
                    self.type(proc, with_turn(play, turn, cards=prompt["legal_plays"][0]["cards"]))
                else:
                    self.type(proc, with_turn(pass_, turn))
            if msg.get("event", {}).get("match_ended"):
                proc.stdin.close()  # the person presses Enter/Ctrl-D: cat ends
        proc.wait(timeout=30)
        assert proc.stderr is not None
        assert proc.returncode == 0, proc.stderr.read()
        return seen

    @staticmethod
    def type(proc: subprocess.Popen[str], action: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(action) + "\n")
        proc.stdin.flush()

    def stop(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.server.kill()
        for pgid in self.groups:  # background bots a block left behind
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGTERM)


def with_turn(
    template: dict[str, Any], turn: int, cards: list[str] | None = None
) -> dict[str, Any]:
    action = json.loads(json.dumps(template))
    action["action"]["turn_id"] = turn
    if cards is not None:
        action["action"]["play"]["cards"] = cards
    return action


def pretty_json_objects(stream: Any) -> Iterator[dict[str, Any]]:
    """grpcurl's output: indented JSON objects, each closed by a '}' in column 0."""
    buf: list[str] = []
    for line in stream:
        buf.append(line)
        if line.rstrip("\n") == "}":
            yield json.loads("".join(buf))
            buf = []


def test_first_bot_page_works_as_written(tmp_path: Path) -> None:
    missing = [t for t in ("node", "npm", "go", "jq") if shutil.which(t) is None]
    if missing:  # the page needs them, so a machine without them cannot check it
        pytest.fail(f"docs/first-bot.md needs {', '.join(missing)} on PATH", pytrace=False)
    newcomer = Newcomer(tmp_path)
    blocks = doc_blocks()
    ran = {"sh": 0, "file": 0}
    by_hand: list[dict[str, Any]] = []
    try:
        for i, (kind, info, body, line) in enumerate(blocks):
            if info.startswith("file="):
                newcomer.save(info.removeprefix("file="), body)
                ran["file"] += 1
            elif kind == "sh" and info == "serve":
                newcomer.serve(body)
            elif kind == "sh" and info == "by-hand":
                actions_block = blocks[i + 1]
                assert actions_block[0] == "json", "the actions to type follow the command"
                actions = [json.loads(x) for x in actions_block[2].splitlines() if x.strip()]
                by_hand = newcomer.play_by_hand(body, actions)
            elif kind == "sh":
                newcomer.run(body, line)
                ran["sh"] += 1
            elif kind == "json":
                assert blocks[i - 1][1] == "by-hand", f"first-bot.md:{line}: a json block alone"
            else:
                pytest.fail(f"first-bot.md:{line}: a ```{kind} {info} block that no test runs")
    finally:
        newcomer.stop()
    assert ran["file"] == 4 and ran["sh"] >= 8, ran
    # The bots live in their author's folder: the page left nothing in the checkout.
    assert newcomer.cwd == tmp_path / "home" / "firstbot"
    assert all((newcomer.cwd / name).exists() for name in MADE)
    assert not any((ROOT / name).exists() for name in MADE)

    # The bots really played: each first bot connected under its name, and the logs verify.
    logs = sorted((newcomer.cwd / "matches").glob("*.jsonl"))
    names = set()
    for log in logs:
        for raw in log.read_text().splitlines():
            if raw.startswith('{"trailer":'):
                continue  # the referee's signature, after the last entry
            event = json.loads(raw)["event"]
            if "seat_connected" in event:
                names.add(event["seat_connected"].get("bot_name"))
            for kind in ("played", "passed"):
                cause = event.get(kind, {}).get("default_cause")
                assert cause is None, f"{log.name}: the referee had to act for a bot: {raw}"
    assert {"first-bot", "first-bot-py", "first-bot-js", "first-bot-go", "me"} <= names
    verify = subprocess.run(
        [sys.executable, "-m", "referee.cli", "verify", *map(str, logs)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert any("playing seat 0 of match" in out for out in newcomer.outputs)

    # By hand: a typo is rejected and the turn stays open; the match ends normally.
    results = [m["result"] for m in by_hand if "result" in m]
    assert any(not r.get("accepted") and r.get("reason") for r in results)
    assert any(r.get("accepted") for r in results)
    (ended,) = [m["event"]["match_ended"] for m in by_hand if "match_ended" in m.get("event", {})]
    assert ended["status"] == "MATCH_STATUS_FINISHED"
