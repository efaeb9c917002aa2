"""Golden playthroughs: whole hands played by a seeded random player, compared line by line.

The files in tests/rules/playthroughs/ are written by scripts/gen_playthroughs.py. Any
change in what the engine deals, lists as legal, applies or scores changes some line;
if the change is intended, regenerate the files and review the diff in version control.
"""

from __future__ import annotations

import difflib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLAYTHROUGHS = Path(__file__).with_name("playthroughs")
HINT = "if the change is intended, run: .venv/bin/python scripts/gen_playthroughs.py"


def _load_generator() -> ModuleType:
    path = ROOT / "scripts" / "gen_playthroughs.py"
    spec = importlib.util.spec_from_file_location("gen_playthroughs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


GEN = _load_generator()


@pytest.mark.parametrize("spec", GEN.SPECS, ids=[s.name for s in GEN.SPECS])
def test_playthrough_matches_golden_file(spec: Any) -> None:
    name = f"{spec.name}.txt"
    path = PLAYTHROUGHS / name
    assert path.exists(), f"missing golden file tests/rules/playthroughs/{name}; {HINT}"
    expected = path.read_text(encoding="utf-8")
    actual = GEN.render(spec)
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                fromfile=f"tests/rules/playthroughs/{name} (golden)",
                tofile=f"{name} (engine now)",
                n=2,
            )
        )
        lines = diff.splitlines()
        if len(lines) > 200:
            diff = "\n".join([*lines[:200], f"... ({len(lines) - 200} more diff lines)"])
        pytest.fail(f"playthrough {name} changed; {HINT}\n{diff}", pytrace=False)


def test_no_stray_golden_files() -> None:
    expected = {f"{s.name}.txt" for s in GEN.SPECS}
    present = {p.name for p in PLAYTHROUGHS.glob("*.txt")}
    assert present == expected, f"golden files without a spec: {sorted(present - expected)}"


def test_every_profile_has_three_hands_and_house_rule_files() -> None:
    by_profile: dict[str, list[Any]] = {}
    for s in GEN.SPECS:
        by_profile.setdefault(s.profile, []).append(s)
    assert set(by_profile) == {"pusoy-dos", "pusoy-dos-chips", "big-two"}
    for specs in by_profile.values():
        plain = sorted(s.hand_number for s in specs if not s.options)
        assert plain == [1, 2, 3]
        assert any(s.options for s in specs)
    required = {e for s in GEN.SPECS for e in s.requires}
    assert {"revolution", "bomb", "forced_lead_pass"} <= required
