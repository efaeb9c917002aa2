"""The policy anchor: a small network trained in the referee's own environments
(``pusoy/Seat-v0``), shipped as numpy weights (``weights/policy-v1.npz``) with the recipe
that made them (``bench/train_policy_anchor.py``, docs/benchmark.md).

It reads the environments' observation (docs/rl.md) and nothing else, so it plays the
same live (the kit's ``SeatEncoder`` makes the observation from the seat's messages) as
in training. Each legal action gets features read from the observation (its size, how
strong its cards are, whether it breaks a pair, how many cards it leaves, the moment's
context: a lead, the kind to beat, the opponents' card counts); a two-layer network
scores them and the anchor plays the highest score (ties: the first legal action), so it
is deterministic. numpy alone: the weights are a few kilobytes.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

FORMAT = "pusoy-policy-anchor/1"
WEIGHTS = Path(__file__).with_name("weights") / "policy-v1.npz"
"""The pool v1 policy's weights."""

OBS_SIZE, NUM_ACTIONS, PASS_ACTION = 658, 1665, 1664
"""The environments' layout (docs/rl.md); checked against the kit's when it is there."""
POS, HELD, COUNTS, KIND, FLAGS = 364, 585, 598, 623, 631
"""Offsets in the observation: per-position cards, held positions, cards left, the kind
to beat, the flags (docs/rl.md, "The observation")."""

ACTION_FEATURES = 16
CONTEXT_FEATURES = 16
FEATURES = ACTION_FEATURES + CONTEXT_FEATURES

Array = npt.NDArray[np.float64]


@functools.cache
def _positions() -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Each action's positions (-1 padded to 5) and sizes, in the action index's order:
    singles, pairs, triples, fives in lexicographic order (docs/rl.md), then the pass."""
    from itertools import combinations

    rows: list[tuple[int, ...]] = []
    for k in (1, 2, 3, 5):
        rows += list(combinations(range(13), k))
    table = np.full((NUM_ACTIONS, 5), -1, dtype=np.int64)
    for a, row in enumerate(rows):
        table[a, : len(row)] = row
    return table, (table >= 0).sum(axis=1)


def features(obs: npt.NDArray[np.int8], actions: npt.NDArray[np.int64]) -> Array:
    """One row of features per action (``actions``: action indices, the legal ones)."""
    table, sizes = _positions()
    o = obs.astype(np.int64)
    block = o[POS:HELD].reshape(13, 17)
    rank = block[:, :13].argmax(axis=1)
    suit = block[:, 13:].argmax(axis=1)
    held = o[HELD : HELD + 13]
    n = len(actions)
    pos = table[actions]
    used = pos >= 0
    size = sizes[actions]
    safe = np.where(used, pos, 0)
    r = np.where(used, rank[safe], 0)
    s = np.where(used, suit[safe], 0)
    strength = np.where(used, r * 4 + s, 0)
    cnt = np.maximum(size, 1)
    held_by_rank = np.bincount(rank[held == 1], minlength=13)
    used_by_rank = np.zeros((n, 13), dtype=np.int64)
    np.add.at(used_by_rank, (np.repeat(np.arange(n), 5)[used.ravel()], r[used]), 1)
    broken = ((used_by_rank > 0) & (used_by_rank < held_by_rank)).sum(axis=1)
    distinct = (used_by_rank > 0).sum(axis=1)
    same_suit = np.all(np.where(used, s == s[:, :1], True), axis=1) & (size == 5)
    mine = held.sum()
    left = mine - size
    is_pass = (actions == PASS_ACTION).astype(np.float64)
    play = 1 - is_pass
    act = np.zeros((n, ACTION_FEATURES))
    act[:, 0] = is_pass
    act[:, 1] = size == 1
    act[:, 2] = size == 2
    act[:, 3] = size == 3
    act[:, 4] = size == 5
    act[:, 5] = np.where(used, r, 0).sum(axis=1) / cnt / 12
    act[:, 6] = np.where(used, r, -1).max(axis=1).clip(0) / 12
    act[:, 7] = np.where(used, strength, 99).min(axis=1).clip(0, 51) / 51 * play
    act[:, 8] = (np.where(used, r, 0) == 12).sum(axis=1) * play  # 2s spent
    act[:, 9] = (np.where(used, r, 0) == 11).sum(axis=1) * play  # aces spent
    act[:, 10] = broken / 2
    act[:, 11] = left / 13 * play + mine / 13 * is_pass
    act[:, 12] = (left == 0) * play
    act[:, 13] = distinct / 5
    act[:, 14] = same_suit
    act[:, 15] = 1.0
    counts = o[COUNTS : COUNTS + 4]
    ctx = np.zeros(CONTEXT_FEATURES)
    ctx[0] = o[FLAGS]  # a fresh lead
    ctx[1:9] = o[KIND : KIND + 8]
    ctx[9] = counts[1:].min() / 13
    ctx[10] = counts[1] / 13
    ctx[11] = mine / 13
    ctx[12] = counts[1:].min() <= 2
    ctx[13] = o[FLAGS + 2]  # a revolution
    ctx[14] = o[FLAGS + 1]  # the opening card must be played
    ctx[15] = 1.0
    return np.hstack([act, np.broadcast_to(ctx, (n, CONTEXT_FEATURES))])


class PolicyNet:
    """``score = w2 . tanh(W1 x + b1)`` per legal action; a softmax over them in
    training, the highest score in play."""

    def __init__(self, params: dict[str, Array]) -> None:
        self.params = params

    @classmethod
    def fresh(cls, hidden: int = 32, seed: int = 0) -> PolicyNet:
        rng = np.random.default_rng(seed)
        return cls(
            {
                "W1": rng.normal(0, 0.1, (FEATURES, hidden)),
                "b1": np.zeros(hidden),
                "w2": rng.normal(0, 0.1, hidden),
            }
        )

    def scores(self, x: Array) -> tuple[Array, Array]:
        h = np.tanh(x @ self.params["W1"] + self.params["b1"])
        return h @ self.params["w2"], h

    def best(self, observation: npt.NDArray[np.int8], mask: npt.NDArray[np.int8]) -> int:
        """The legal action with the highest score (the first of equals)."""
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        z, _ = self.scores(features(observation, legal))
        return int(legal[int(np.argmax(z))])

    def save(self, path: Path) -> None:
        arrays: dict[str, Any] = {"format": np.array(FORMAT), **self.params}
        np.savez(path, **arrays)

    @classmethod
    def load(cls, path: Path) -> PolicyNet:
        """Raises ValueError for a file that is not this network's weights."""
        with np.load(path) as data:
            if "format" not in data or str(data["format"]) != FORMAT:
                raise ValueError(f"{path} is not a {FORMAT} file")
            params = {k: data[k].astype(np.float64) for k in ("W1", "b1", "w2")}
        if params["W1"].shape[0] != FEATURES:
            raise ValueError(
                f"{path}: {params['W1'].shape[0]} features, this network reads {FEATURES}"
            )
        return cls(params)


@functools.cache
def anchor_net() -> PolicyNet:
    """The pool's policy, loaded once per process."""
    return PolicyNet.load(WEIGHTS)
