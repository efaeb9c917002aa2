"""A small policy in numpy alone: it scores each legal action from the observation.

The observation holds, per position of the action index, the card's rank and suit
strength and whether it is still held (docs/rl.md), so a policy can read the cards of
every action from the observation alone: live, over gRPC, it sees the same numbers as in
training. Each legal action gets features (its size, how strong its cards are, whether
it breaks a pair, how many cards it leaves, ...) joined with features of the moment (a
lead or not, the table's kind, the opponents' card counts), and a two-layer network turns
them into a score; the policy is the softmax of the scores over the legal actions.

Needs numpy and the kit (``pusoy_client.rl``), not the referee: ``policy_bot.py`` seats
it at any referee.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from pusoy_client.rl import NUM_ACTIONS, OBS_SIZE, PASS_ACTION, positions_of

# Offsets in the observation (docs/rl.md, the kit's pusoy_client.rl.observation).
POS, HELD, COUNTS, KIND, FLAGS = 364, 585, 598, 623, 631

_POSITIONS = np.full((NUM_ACTIONS, 5), -1, dtype=np.int64)
for _a in range(PASS_ACTION):
    _p = positions_of(_a)
    _POSITIONS[_a, : len(_p)] = _p
_SIZES = (_POSITIONS >= 0).sum(axis=1)

ACTION_FEATURES = 16
CONTEXT_FEATURES = 16
FEATURES = ACTION_FEATURES + CONTEXT_FEATURES
FORMAT = "pusoy-rl-example-policy/1"


def _cards(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank (0..12), suit strength (0..3) and held (0/1) of each of the 13 positions."""
    block = obs[POS:HELD].reshape(13, 17)
    rank = block[:, :13].argmax(axis=1)
    suit = block[:, 13:].argmax(axis=1)
    return rank, suit, obs[HELD : HELD + 13].astype(np.int64)


def features(obs: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """One row of features per action (``actions``: indices, legal ones)."""
    obs = obs.astype(np.int64)
    rank, suit, held = _cards(obs)
    n = len(actions)
    pos = _POSITIONS[actions]
    used = pos >= 0
    size = _SIZES[actions]
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
    my_cards = held.sum()
    left = my_cards - size
    is_pass = (actions == PASS_ACTION).astype(np.float64)
    act = np.zeros((n, ACTION_FEATURES))
    act[:, 0] = is_pass
    act[:, 1] = size == 1
    act[:, 2] = size == 2
    act[:, 3] = size == 3
    act[:, 4] = size == 5
    act[:, 5] = np.where(used, r, 0).sum(axis=1) / cnt / 12
    act[:, 6] = np.where(used, r, -1).max(axis=1).clip(0) / 12
    act[:, 7] = np.where(used, strength, 99).min(axis=1).clip(0, 51) / 51 * (1 - is_pass)
    act[:, 8] = (np.where(used, r, 0) == 12).sum(axis=1) * (1 - is_pass)  # 2s used
    act[:, 9] = (np.where(used, r, 0) == 11).sum(axis=1) * (1 - is_pass)  # aces used
    act[:, 10] = broken / 2
    act[:, 11] = left / 13 * (1 - is_pass) + my_cards / 13 * is_pass
    act[:, 12] = (left == 0) * (1 - is_pass)
    act[:, 13] = distinct / 5
    act[:, 14] = same_suit
    act[:, 15] = 1.0
    counts = obs[COUNTS : COUNTS + 4]
    ctx = np.zeros(CONTEXT_FEATURES)
    ctx[0] = obs[FLAGS]  # a fresh lead
    ctx[1:9] = obs[KIND : KIND + 8]
    ctx[9] = counts[1:].min() / 13
    ctx[10] = counts[1] / 13
    ctx[11] = my_cards / 13
    ctx[12] = counts[1:].min() <= 2
    ctx[13] = obs[FLAGS + 2]  # a revolution
    ctx[14] = obs[FLAGS + 1]  # the opening card must be played
    ctx[15] = 1.0
    return np.hstack([act, np.broadcast_to(ctx, (n, CONTEXT_FEATURES))])


class Policy:
    """``scores = w2 . tanh(W1 x + b1)`` per legal action, softmax over them."""

    def __init__(self, hidden: int = 32, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.params: dict[str, np.ndarray] = {
            "W1": rng.normal(0, 0.1, (FEATURES, hidden)),
            "b1": np.zeros(hidden),
            "w2": rng.normal(0, 0.1, hidden),
        }

    # -- acting ---------------------------------------------------------------------

    def scores(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h = np.tanh(x @ self.params["W1"] + self.params["b1"])
        return h @ self.params["w2"], h

    def probabilities(self, obs: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, Any]:
        x = features(obs, legal)
        z, h = self.scores(x)
        z = z - z.max()
        p = np.exp(z)
        p /= p.sum()
        return p, (x, h)

    def act(
        self, observation: dict[str, np.ndarray], rng: np.random.Generator | None = None
    ) -> int:
        """An action: the most likely one, or sampled with ``rng``."""
        legal = np.flatnonzero(observation["action_mask"])
        p, _ = self.probabilities(observation["observation"], legal)
        i = int(rng.choice(len(legal), p=p)) if rng is not None else int(p.argmax())
        return int(legal[i])

    __call__ = act

    # -- learning -------------------------------------------------------------------

    def grad_log_prob(self, cache: Any, p: np.ndarray, chosen: int) -> dict[str, np.ndarray]:
        """The gradient of log p[chosen] (``cache`` from ``probabilities``)."""
        x, h = cache
        dz = -p
        dz[chosen] += 1.0  # d log softmax / dz
        w2 = self.params["w2"]
        dh = np.outer(dz, w2) * (1 - h**2)
        return {"W1": x.T @ dh, "b1": dh.sum(axis=0), "w2": h.T @ dz}

    # -- files ----------------------------------------------------------------------

    def save(self, path: Path) -> None:
        np.savez(path, format=np.array(FORMAT), **self.params)

    @classmethod
    def load(cls, path: Path) -> Policy:
        with np.load(path) as data:
            if str(data["format"]) != FORMAT:
                raise ValueError(f"{path} is not a {FORMAT} file")
            policy = cls(hidden=data["b1"].shape[0])
            policy.params = {k: data[k].astype(np.float64) for k in ("W1", "b1", "w2")}
        return policy


class Adam:
    def __init__(self, params: dict[str, np.ndarray], lr: float) -> None:
        self.lr = lr
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def ascend(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
        self.t += 1
        for k, g in grads.items():
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            mh = self.m[k] / (1 - 0.9**self.t)
            vh = self.v[k] / (1 - 0.999**self.t)
            params[k] += self.lr * mh / (np.sqrt(vh) + 1e-8)


if OBS_SIZE != 658:  # pragma: no cover - a kit with another layout
    raise ImportError(f"this policy reads observation layout 658, the kit has {OBS_SIZE}")
