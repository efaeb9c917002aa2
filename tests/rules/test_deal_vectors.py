"""The seeded deal matches docs/deal-vectors.json, in Python and in an independent Node.js
implementation written from docs/deals.md (proof that the algorithm is language-neutral)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from referee.rules import card_text, deal, format_cards, seed_commitment, shuffled_deck

ROOT = Path(__file__).resolve().parents[2]
VECTORS_PATH = ROOT / "docs" / "deal-vectors.json"
NODE_CHECK = Path(__file__).with_name("deal_vectors_check.mjs")


def _load_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _vectors() -> list[dict[str, Any]]:
    doc = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
    vectors: list[dict[str, Any]] = doc["vectors"]
    return vectors


VECTORS = _vectors()


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_engine_reproduces_vector(vector: dict[str, Any]) -> None:
    seed, number = vector["seed"], vector["hand_number"]
    assert seed.encode("utf-8").hex() == vector["seed_utf8_hex"]
    assert seed_commitment(seed) == vector["seed_commitment"]
    deck = shuffled_deck(seed, number)
    assert deck == vector["dealt"]
    assert " ".join(card_text(c) for c in deck) == vector["dealt_text"]
    hands = deal(seed, number)
    # Card id order is card order under clubs-low, so format_cards gives id order.
    assert [format_cards(h) for h in hands] == vector["hands"]


def test_vectors_cover_the_cases_the_doc_promises() -> None:
    seeds = {v["seed"] for v in VECTORS}
    assert "" in seeds
    assert any(not s.isascii() for s in seeds)
    assert any(len(s) == 64 and all(c in "0123456789abcdef" for c in s) for s in seeds)
    assert {1, 2, 10, 1000} <= {v["hand_number"] for v in VECTORS}
    assert any(v["rejected_draws"] > 0 for v in VECTORS), "no vector exercises rejection"


def test_vector_file_is_current() -> None:
    gen = _load_script("gen_deal_vectors")
    assert VECTORS_PATH.read_text(encoding="utf-8") == gen.render(), (
        "docs/deal-vectors.json differs from what the engine deals now; if the change is "
        "intended, run: .venv/bin/python scripts/gen_deal_vectors.py"
    )


def test_independent_node_implementation_agrees() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail(
            "Node.js ('node') is not on PATH: this test runs tests/rules/deal_vectors_check.mjs "
            "to prove the deal algorithm is language-neutral. Install Node.js 18 or later "
            "(e.g. apt-get install nodejs) and run again."
        )
    proc = subprocess.run(
        [node, str(NODE_CHECK), str(VECTORS_PATH)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, f"node check failed:\n{proc.stdout}\n{proc.stderr}"
    assert f"{len(VECTORS)} of {len(VECTORS)} vectors agree" in proc.stdout
