"""Helpers: write a tournament config in a temporary folder, read its results back."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jailing

from referee.sandbox import Level

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BOTS = Path(__file__).resolve().parent / "bots"


def toml_value(value: Any) -> str:
    """A TOML value: JSON's spelling works for strings, numbers, bools and arrays."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def bot_entry(name: str, **fields: Any) -> str:
    lines = ["[[bot]]", f"name = {json.dumps(name)}"]
    lines += [f"{key} = {toml_value(value)}" for key, value in fields.items()]
    return "\n".join(lines)


def write_config(
    folder: Path,
    bots: list[str],
    *,
    tournament: dict[str, Any] | None = None,
    rules: dict[str, Any] | None = None,
    time: dict[str, Any] | None = None,
    referee: dict[str, Any] | None = None,
    name: str = "t.toml",
    more: dict[str, dict[str, Any]] | None = None,
) -> Path:
    """A config file; bots are ``bot_entry`` texts; ``more`` adds sections such as
    ``{"sandbox": {...}}``. Defaults keep matches short."""
    sections = {
        "tournament": {"seed": "test-seed", "output": "out", **(tournament or {})},
        "rules": {"profile": "pusoy-dos", "hands": 2, **(rules or {})},
        "time": {"turn_time_ms": 400, "connect_timeout_ms": 5000, **(time or {})},
        "referee": {**(referee or {})},
        **(more or {}),
    }
    text = []
    for section, values in sections.items():
        text.append(f"[{section}]")
        text += [f"{k} = {toml_value(v)}" for k, v in values.items()]
        text.append("")
    text += [*bots, ""]
    path = folder / name
    path.write_text("\n".join(text), encoding="utf-8")
    return path


def read_results(folder: Path) -> list[dict[str, Any]]:
    path = folder / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def example_bot(script: str, **env: str) -> dict[str, Any]:
    """A spawned example bot (the fields of its [[bot]] entry)."""
    fields: dict[str, Any] = {"command": f"{{python}} {EXAMPLES / script}"}
    if env:
        fields["env"] = env
    return fields


def spawned_bot(script: str) -> dict[str, Any]:
    return {"command": f"{{python}} {BOTS / script}"}


def require_sandbox() -> None:
    """Skip where this machine cannot make the full jail (root, cgroup v1), with the
    typed error's own words (what is missing); nothing is faked in its place. Under CI
    (CI=true) fail instead."""
    jailing.require_level(Level.FULL)


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if marker.encode() in cmdline and entry.name != str(os.getpid()):
                found.append(int(entry.name))
    return found
