"""The benchmark's pools: frozen, versioned sets of anchors on a published deal set.

A pool is its anchors (built-in bots, ``referee.bots``), each with a rating frozen when
the pool was made, the rules and match length its matches are played under, and the
deal set: deal ``k`` is dealt from the seed ``SHA-256("<deal seed>:<k>")`` (the
tournament's ``deals = "per-round"`` schedule), the same for every candidate, every
run and every machine. What is frozen is kept in ``pool-<version>.json`` beside this
module; ``referee.benchmark.frozen`` checks that the anchors still decide as they did
when it was written (a test in CI). Any change to an anchor's play is a new version.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any

from referee.rules import Rules

POOLS_DIR = Path(__file__).resolve().parent
CURRENT = "v1"
RATING_SCALE = 400.0
"""Ratings are on the Elo scale: 400 points of difference is 10 to 1 odds that the
stronger does better on a deal."""


class PoolError(ValueError):
    """No such pool, or its file is damaged."""


@dataclasses.dataclass(frozen=True, slots=True)
class Anchor:
    name: str
    """Its name at the table, which is its built-in bot's."""
    rating: float
    """Frozen with the pool (Bradley-Terry on the pool's own table, random at 0)."""
    description: str
    decisions: str
    """SHA-256 of its decisions on the pool's fixed positions (``frozen.py``)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Pool:
    version: str
    anchors: tuple[Anchor, ...]
    profile: str
    hands: int
    """Hands per match."""
    deal_seed: str
    """The deal set's master seed."""
    default_deals: int
    quick_deals: int
    quick_leaves_out: tuple[str, ...]
    """Anchors a ``--quick`` run does without (the slow search)."""
    positions_seed: str
    positions: int
    """The fixed positions the decisions hashes are taken on: ``positions`` of them,
    from hands dealt from ``positions_seed`` (``frozen.py``)."""
    table: dict[str, Any]
    """The pool's own table as it was when the ratings were fitted (docs/benchmark.md)."""

    @property
    def rules(self) -> Rules:
        return Rules.for_profile(self.profile, {"match_end": f"hands {self.hands}"})

    def anchor(self, name: str) -> Anchor:
        return next(a for a in self.anchors if a.name == name)

    def names(self, quick: bool = False) -> list[str]:
        return [a.name for a in self.anchors if not (quick and a.name in self.quick_leaves_out)]

    def ratings(self) -> dict[str, float]:
        return {a.name: a.rating for a in self.anchors}


def pool_path(version: str) -> Path:
    return POOLS_DIR / f"pool-{version}.json"


@functools.cache
def load_pool(version: str = CURRENT) -> Pool:
    """A pool by version; raises PoolError."""
    if not version.replace("-", "").isalnum():
        raise PoolError(f"no pool {version!r}")
    path = pool_path(version)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        anchors = tuple(
            Anchor(
                str(a["name"]),
                float(a["rating"]),
                str(a["description"]),
                str(a["decisions"]),
            )
            for a in doc["anchors"]
        )
        return Pool(
            version=str(doc["version"]),
            anchors=anchors,
            profile=str(doc["profile"]),
            hands=int(doc["hands"]),
            deal_seed=str(doc["deal_seed"]),
            default_deals=int(doc["default_deals"]),
            quick_deals=int(doc["quick_deals"]),
            quick_leaves_out=tuple(str(n) for n in doc["quick_leaves_out"]),
            positions_seed=str(doc["positions_seed"]),
            positions=int(doc["positions"]),
            table=dict(doc.get("table", {})),
        )
    except FileNotFoundError:
        known = sorted(p.stem.removeprefix("pool-") for p in POOLS_DIR.glob("pool-*.json"))
        raise PoolError(f"no pool {version!r} (known: {', '.join(known)})") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PoolError(f"{path} is damaged: {exc}") from None
