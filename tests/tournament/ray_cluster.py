"""A real Ray cluster of separate nodes on this machine, for tests and benchmarks.

Each node is its own ``ray start --block`` process (a session of its own, its own temp
folder, ports picked free), so one node can be killed outright (SIGKILL to every process
it started: the raylet, its workers, what they spawned) while the others go on, as when a
machine dies. ``ray stop`` is never used: it stops every Ray of the machine, other
people's included.

The cluster uses token authentication as docs/tournaments.md sets it up
(``RAY_AUTH_MODE=token`` on every node and driver), with its token in a file of its own
(Ray's ``RAY_AUTH_TOKEN_PATH``) rather than ``~/.ray/auth_token``: what the user's home
holds changes nothing. Drivers take ``auth_env()``.
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RAY_SETTINGS = ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
"""The user's own Ray settings, which the cluster and its drivers do without."""
START_TIMEOUT_S = 120.0
START_ATTEMPTS = 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children first seen, then theirs)."""
    kids = _children()
    out: list[int] = []
    todo = [pid]
    while todo:
        for child in kids.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


class Node:
    def __init__(self, proc: subprocess.Popen[bytes], temp_dir: Path, log: Path) -> None:
        self.proc = proc
        self.temp_dir = temp_dir
        self.log = log

    def raylet_errors(self) -> str:
        """The raylet's fatal lines, for a node that did not come up."""
        found = []
        for path in self.temp_dir.glob("session_*/logs/raylet.out"):
            lines = path.read_text(errors="replace").splitlines()
            found += [line for line in lines if " C " in line or " E " in line][:5]
        return "\nraylet: " + "\n".join(found) if found else ""

    def processes(self) -> list[int]:
        return [self.proc.pid, *descendants(self.proc.pid)]

    def running(self, needle: str) -> bool:
        """Whether one of this node's processes has ``needle`` in its command line (a
        Ray worker's title is ``ray::FUNCTION`` while it runs a task)."""
        return any(needle in cmdline(pid) for pid in descendants(self.proc.pid))

    def kill(self) -> None:
        """SIGKILL every process of the node at once: a machine that dies."""
        for pid in self.processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM: ``ray start --block`` stops what it started; then SIGKILL the rest."""
        left = self.processes()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(20)
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)


class LocalCluster:
    """``with LocalCluster(ray) as c: c.add_node(); ... c.address``."""

    def __init__(self, ray_cli: str | Path | None = None) -> None:
        self.ray_cli = str(ray_cli or Path(sys.executable).with_name("ray"))
        # Unix socket paths are short: keep the folder near /.
        self.root = Path(tempfile.mkdtemp(prefix="pray-", dir="/tmp"))
        self.nodes: list[Node] = []
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.token_file = self.root / "auth_token"
        self.token_file.touch(mode=0o600)
        self.token_file.write_text(secrets.token_hex(32))

    def auth_env(self) -> dict[str, str]:
        """Ray's settings for a node or a driver of this cluster."""
        return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(self.token_file)}

    def driver_env(self) -> dict[str, str]:
        """This process's environment with this cluster's authentication (and no other)."""
        env = {k: v for k, v in os.environ.items() if k not in RAY_SETTINGS}
        return {**env, **self.auth_env()}

    def _start(self, args: list[str], name: str) -> Node:
        """Start a node, again when it fails to come up: on a very busy machine a node's
        dashboard agent (Python) may take longer to start than its raylet waits for it
        (15 s, fixed in Ray 2.60), and the raylet then aborts."""
        for attempt in range(1, START_ATTEMPTS):
            try:
                return self._start_once(args, f"{name}-{attempt}")
            except RuntimeError as exc:
                print(f"a Ray node failed to start, trying again: {exc}", file=sys.stderr)
        return self._start_once(args, f"{name}-{START_ATTEMPTS}")

    def _start_once(self, args: list[str], name: str) -> Node:
        temp = self.root / name
        log = self.root / f"{name}.log"
        low = random.randrange(20000, 60000, 200)
        argv = [
            self.ray_cli,
            "start",
            "--block",
            "--disable-usage-stats",
            "--num-cpus=1",
            "--node-ip-address=127.0.0.1",
            f"--temp-dir={temp}",
            f"--node-manager-port={free_port()}",
            f"--object-manager-port={free_port()}",
            f"--metrics-export-port={free_port()}",
            f"--dashboard-agent-listen-port={free_port()}",
            f"--dashboard-agent-grpc-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}",
            f"--min-worker-port={low}",
            f"--max-worker-port={low + 199}",
            "--object-store-memory=100000000",
            *args,
        ]
        env = self.driver_env()
        # On a busy machine the node's agents may take longer to come up than the
        # raylet waits for them by default (it then aborts).
        env.setdefault("RAY_agent_register_timeout_ms", "180000")
        # A dead node is noticed in seconds rather than the default half minute.
        env.setdefault("RAY_health_check_period_ms", "1000")
        env.setdefault("RAY_health_check_failure_threshold", "3")
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env
            )
        node = Node(proc, temp, log)
        try:
            self._wait_for(node)
        except RuntimeError:
            node.stop()
            raise
        self.nodes.append(node)
        return node

    def start_head(self) -> Node:
        return self._start(
            [
                "--head",
                f"--port={self.port}",
                "--include-dashboard=false",
            ],
            "head",
        )

    def add_node(self) -> Node:
        return self._start([f"--address={self.address}"], f"node{len(self.nodes)}")

    def _wait_for(self, node: Node) -> None:
        """Until ``ray start`` says the node is up (it prints that, then blocks)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            text = node.log.read_text(errors="replace")
            if "Ray runtime started" in text:
                return
            if node.proc.poll() is not None:
                raise RuntimeError(f"ray start exited: {text[-3000:]}{node.raylet_errors()}")
            time.sleep(0.3)
        raise RuntimeError(f"the Ray node did not come up: {text[-3000:]}{node.raylet_errors()}")

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
