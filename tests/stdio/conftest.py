"""Stdio bots over real processes: the samples built once, ``referee match`` as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from referee_cli import run_referee

from referee.log import read_log

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "clients" / "stdio"
BOTS = Path(__file__).resolve().parent / "bots"
MISBEHAVING = f"{sys.executable} {BOTS / 'misbehaving.py'}"
_built: list[subprocess.CompletedProcess[str]] = []


def build_samples() -> dict[str, str]:
    """The sample bots' commands (after clients/stdio/build.sh); fails the test if it fails."""
    if not _built:
        _built.append(
            subprocess.run(
                ["bash", str(KIT / "build.sh")],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        )
    done = _built[0]
    if done.returncode != 0:
        pytest.fail(f"clients/stdio/build.sh failed:\n{done.stdout}\n{done.stderr}", pytrace=False)
    return {
        "c": str(KIT / "c" / "bot"),
        "jq": f"sh {KIT / 'jq' / 'bot.sh'}",
        "perl": f"perl {KIT / 'perl' / 'bot.pl'}",
    }


def referee(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return run_referee(*args, timeout=timeout)


def referee_match(
    tmp: Path, bots: list[str], *extra: str, expect: int = 0
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """Play one match; its log's path and the finished command."""
    done = referee(
        "match",
        "--log-dir",
        str(tmp),
        "--connect-timeout-ms",
        "60000",
        *extra,
        *[a for b in bots for a in ("--bot", b)],
    )
    stderr = "".join(f"\n{p.name}:\n{p.read_text()[-3000:]}" for p in tmp.glob("*.stderr"))
    assert done.returncode == expect, done.stdout + done.stderr + stderr
    log = next(
        line.split("Log: ")[1] for line in done.stdout.splitlines() if line.startswith("Log: ")
    )
    return Path(log), done


def events(path: Path, kind: str, seat: int | None = None) -> list[Any]:
    """The log's events of one kind, of one seat if given."""
    out = []
    for line in read_log(path).lines:
        event = line.entry.event
        if event.WhichOneof("kind") == kind:
            body = getattr(event, kind)
            if seat is None or getattr(body, "seat", None) == seat:
                out.append(body)
    return out


def seat_stderr(log: Path, seat: int) -> str:
    return (log.parent / f"{log.stem}.seat{seat}.stderr").read_text(errors="replace")
