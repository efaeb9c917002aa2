"""Keyword arguments to rules, and deal seeds from an environment's random generator."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from referee.rules import Rules
from referee.rules.deal import MAX_SEED_BYTES


def make_rules(profile: str, options: Mapping[str, Any]) -> Rules:
    """The rules of a profile with options by name (OptionsError names a bad one)."""
    return Rules.for_profile(profile, dict(options))


def deal_seed(rng: np.random.Generator, options: Mapping[str, Any] | None) -> str:
    """The deal seed of an episode: ``options["deal_seed"]`` (the seed of a referee match,
    to deal the same cards), else 16 hex digits drawn from the environment's generator."""
    given = (options or {}).get("deal_seed")
    if given is not None:
        if not isinstance(given, str) or not given or len(given.encode()) > MAX_SEED_BYTES:
            raise ValueError(f"deal_seed must be a text of 1 to {MAX_SEED_BYTES} bytes")
        return given
    return f"{int(rng.integers(0, 2**63)):016x}"
