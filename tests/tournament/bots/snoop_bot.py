#!/usr/bin/env python3
"""A bot that tries to get out of its sandbox at its first prompt, then plays greedily.

Each attempt prints one line ``SNOOP {"attempt": ..., "got": ...}`` to standard error
saying what it got; the tests decide from it whether the attempt failed. The targets
come from the environment:

- PUSOY_SNOOP_READ: paths to read (os.pathsep between them): another bot's files, the
  tournament's folder, the configuration;
- PUSOY_SNOOP_WRITE: paths to write;
- PUSOY_SNOOP_PORTS: TCP ports on 127.0.0.1 to connect to (commas between them);
- PUSOY_SNOOP_TMP_MB: how many MB to try to write to /tmp (default 16).
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

from pusoy_client import Choice, main
from pusoy_client.protocol import play_service
from pusoy_client.samples import GreedyBot


def report(attempt: str, got: object) -> None:
    print("SNOOP " + json.dumps({"attempt": attempt, "got": got}), file=sys.stderr, flush=True)


def try_reads(paths: list[str]) -> dict[str, object]:
    """Path -> bytes read, or the error."""
    out: dict[str, object] = {}
    for path in paths:
        try:
            out[path] = len(Path(path).read_bytes())
        except OSError as exc:
            out[path] = f"{type(exc).__name__}: {exc.strerror}"
    return out


def try_writes(paths: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for path in paths:
        try:
            Path(path).write_text("written by snoop_bot\n")
            out[path] = "written"
        except OSError as exc:
            out[path] = f"{type(exc).__name__}: {exc.strerror}"
    return out


def try_connects(ports: list[int], remote: tuple[str, int] | None) -> dict[str, object]:
    out: dict[str, object] = {}
    targets = [("127.0.0.1", p) for p in ports] + ([remote] if remote else [])
    for host, port in targets:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                out[f"{host}:{port}"] = "connected"
        except OSError as exc:
            out[f"{host}:{port}"] = f"{type(exc).__name__}: {exc.strerror or exc}"
    return out


def other_tokens(own: str) -> list[str]:
    """Seat tokens of other processes, from their command lines and environments."""
    found: set[str] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        for name in ("cmdline", "environ"):
            try:
                words = (entry / name).read_bytes().split(b"\0")
            except OSError:
                continue
            for word in words:
                text = word.decode(errors="replace")
                for prefix in ("--token=", "PUSOY_TOKEN="):
                    if text.startswith(prefix) and text[len(prefix) :] != own:
                        found.add(text[len(prefix) :])
    return sorted(found)


def keyring() -> str:
    """Store a key in the user's keyring (a store no namespace isolates), then revoke it."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    add_key, keyctl, revoke, user_keyring = 248, 250, 3, -4  # x86-64
    key = libc.syscall(add_key, b"user", b"pusoy-snoop", b"a deal", 6, user_keyring)
    if key < 0:
        return f"Error: {os.strerror(ctypes.get_errno())}"
    libc.syscall(keyctl, revoke, key)
    return "stored"


def organise(address: str) -> str:
    """Ask the referee for its matches (then their logs would be one call away). The
    kit has no MatchService stubs: an empty ListMatchesRequest is zero bytes."""
    import grpc

    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary("/pusoy.referee.v1.MatchService/ListMatches")
        try:
            listed = call(b"", timeout=5)
        except grpc.RpcError as exc:
            return f"Error: {exc.code().name}"
    return f"listed ({len(listed)} bytes)"


def open_files(limit: int = 5000) -> int:
    """How many files it could open at once (up to ``limit``)."""
    held = []
    try:
        for _ in range(limit):
            held.append(open(os.devnull, "rb"))  # noqa: SIM115
    except OSError:
        pass
    count = len(held)
    for f in held:
        f.close()
    return count


def fill_tmp(limit_mb: int) -> int:
    """How many MB it could write to /tmp (up to ``limit_mb``: unsandboxed, /tmp is the
    machine's own)."""
    written = 0
    path = Path("/tmp/snoop-fill")
    block = b"x" * (1 << 20)
    try:
        with open(path, "wb") as f:
            while written < limit_mb:
                f.write(block)
                f.flush()
                written += 1
    except OSError:
        pass
    path.unlink(missing_ok=True)
    return written


def snoop() -> None:
    env = os.environ
    report("read", try_reads([p for p in env.get("PUSOY_SNOOP_READ", "").split(os.pathsep) if p]))
    report(
        "write", try_writes([p for p in env.get("PUSOY_SNOOP_WRITE", "").split(os.pathsep) if p])
    )
    ports = [int(p) for p in env.get("PUSOY_SNOOP_PORTS", "").split(",") if p]
    report("connect", try_connects(ports, ("192.0.2.1", 80)))
    report("tokens", other_tokens(env.get("PUSOY_TOKEN", "")))
    report("processes", sorted(int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit()))
    report("uid", os.getuid())
    report("keyring", keyring())
    report("organise", organise(env.get("PUSOY_ADDRESS", "")))
    report("open_files", open_files())
    report("tmp_mb", fill_tmp(int(env.get("PUSOY_SNOOP_TMP_MB", "16"))))


class SnoopBot(GreedyBot):
    name = "snoop"

    def __init__(self) -> None:
        self.done = False

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        if not self.done:
            self.done = True
            snoop()
        return super().choose(prompt)


if __name__ == "__main__":
    sys.exit(main(SnoopBot()))
