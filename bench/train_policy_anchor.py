#!/usr/bin/env python3
"""The recipe of the pool's policy anchor (``referee/bots/weights/policy-v1.npz``).

Trained in the referee's own single-seat environment (``pusoy/Seat-v0``, the pool's
rules: big-two, hands dealt from seeds), numpy alone, on one core:

1. **Imitation** (DAgger-style) of the rule-based expert: the learner's seat is played
   by the expert (by the network itself a fifth of the time, so that it also learns
   where its own mistakes lead), every decision labelled with the expert's choice, the
   other seats drawn from random, greedy and the expert; the network
   (``referee.bots.policy``) is fitted to the labels by cross-entropy (Adam).
2. **Policy gradient** (REINFORCE with a running baseline): one hand an episode, every
   decision credited with the hand's reward, against the same opponents.

Deterministic for a seed (numpy's generator, the environment's seeds). Heavy: run it
outside CI, ``nice``. What it printed when it made policy-v1 is in docs/benchmark.md.

    nice -n 10 .venv/bin/python bench/train_policy_anchor.py \
        --out referee/bots/weights/policy-v1.npz
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

import referee.rl  # noqa: F401  (registers pusoy/Seat-v0)
from referee.bots.policy import PolicyNet, features
from referee.rl import OpponentPool
from referee.rl.opponents import builtin
from referee.tournament.stats import paired

OPPONENTS = {"random": 1.0, "greedy": 2.0, "expert": 2.0}


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


def probabilities(net: PolicyNet, obs: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, Any]:
    x = features(obs, legal)
    z, h = net.scores(x)
    z = z - z.max()
    p = np.exp(z)
    return p / p.sum(), (x, h)


def grad_log_prob(net: PolicyNet, cache: Any, p: np.ndarray, chosen: int) -> dict[str, np.ndarray]:
    x, h = cache
    dz = -p.copy()
    dz[chosen] += 1.0
    dh = np.outer(dz, net.params["w2"]) * (1 - h**2)
    return {"W1": x.T @ dh, "b1": dh.sum(axis=0), "w2": h.T @ dz}


def seat_env(opponents: Any, hands_cap: int | None = None, seat: int | None = None) -> Any:
    return gymnasium.make(
        "pusoy/Seat-v0", profile="big-two", opponents=opponents, hands_cap=hands_cap, seat=seat
    ).unwrapped


def collect(net: PolicyNet, games: int, seed: int, own_share: float) -> list[tuple]:
    """Decisions of the learner's seat labelled by the expert."""
    env = seat_env(OpponentPool(OPPONENTS), hands_cap=1)
    expert = builtin("expert")
    rng = np.random.default_rng(seed)
    rows: list[tuple] = []
    for g in range(games):
        obs, _ = env.reset(seed=seed * 1_000_003 + g)
        done = False
        while not done:
            label = expert.act(env.game, env.seat, rng)
            rows.append((obs["observation"].copy(), np.flatnonzero(obs["action_mask"]), label))
            action = label
            if rng.random() < own_share:
                action = net.best(obs["observation"], obs["action_mask"])
            obs, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
    return rows


def imitate(net: PolicyNet, rows: list[tuple], epochs: int, lr: float, seed: int) -> float:
    rng = np.random.default_rng(seed)
    opt = Adam(net.params, lr)
    batch = 64
    for _ in range(epochs):
        order = rng.permutation(len(rows))
        for start in range(0, len(rows), batch):
            grads = {k: np.zeros_like(v) for k, v in net.params.items()}
            for i in order[start : start + batch]:
                obs, legal, label = rows[i]
                if len(legal) < 2:
                    continue
                p, cache = probabilities(net, obs, legal)
                chosen = int(np.flatnonzero(legal == label)[0])
                for k, gr in grad_log_prob(net, cache, p, chosen).items():
                    grads[k] += gr / batch
            opt.ascend(net.params, grads)
    hits = sum(net.best(o, _mask(legal)) == label for o, legal, label in rows[:3000])
    return hits / min(len(rows), 3000)


def _mask(legal: np.ndarray) -> np.ndarray:
    m = np.zeros(1665, dtype=np.int8)
    m[legal] = 1
    return m


def reinforce(net: PolicyNet, seconds: float, lr: float, seed: int) -> int:
    env = seat_env(OpponentPool(OPPONENTS), hands_cap=1)
    rng = np.random.default_rng(seed)
    opt = Adam(net.params, lr)
    baseline = 0.0
    episodes = 0
    end = time.process_time() + seconds
    while time.process_time() < end:
        grads = {k: np.zeros_like(v) for k, v in net.params.items()}
        for _ in range(16):
            obs, _ = env.reset(seed=int(rng.integers(2**31)))
            steps = []
            total = 0.0
            done = False
            while not done:
                legal = np.flatnonzero(obs["action_mask"])
                p, cache = probabilities(net, obs["observation"], legal)
                i = int(rng.choice(len(legal), p=p))
                steps.append((cache, p, i))
                obs, reward, terminated, truncated, _ = env.step(int(legal[i]))
                total += reward
                done = terminated or truncated
            advantage = total - baseline
            baseline += 0.02 * (total - baseline)
            for cache, p, i in steps:
                for k, g in grad_log_prob(net, cache, p, i).items():
                    grads[k] += advantage * g / 16
            episodes += 1
        opt.ascend(net.params, grads)
    return episodes


def evaluate(net: PolicyNet, deals: int, against: str) -> tuple[float, float, float]:
    """The policy and the expert in seat 0 on the same deals against three ``against``:
    the policy's score per hand minus the baseline's, with its 95% interval."""
    diffs = []
    for who in ("policy", "greedy"):
        env = seat_env([against] * 3, hands_cap=1, seat=0)
        scores = []
        for d in range(deals):
            obs, _ = env.reset(seed=10_000 + d)
            total, done = 0.0, False
            while not done:
                if who == "policy":
                    action = net.best(obs["observation"], obs["action_mask"])
                else:
                    action = builtin("greedy").act(env.game, env.seat, np.random.default_rng(0))
                obs, r, terminated, truncated, _ = env.step(action)
                total += r
                done = terminated or truncated
            scores.append(total)
        diffs.append(scores)
    p = paired([a - b for a, b in zip(diffs[0], diffs[1], strict=True)])
    return p.mean, p.ci95_low, p.ci95_high


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--games", type=int, default=1500, help="hands of imitation data per round")
    ap.add_argument("--rounds", type=int, default=3, help="DAgger rounds")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--reinforce-seconds", type=float, default=300.0, help="CPU seconds")
    ap.add_argument("--eval-deals", type=int, default=400)
    args = ap.parse_args()
    started = time.monotonic()
    cpu = time.process_time()
    net = PolicyNet.fresh(hidden=32, seed=args.seed)
    rows: list[tuple] = []
    for r in range(args.rounds):
        rows += collect(net, args.games, args.seed + r, own_share=0.0 if r == 0 else 0.2)
        agree = imitate(net, rows, args.epochs, 3e-3, args.seed + r)
        print(
            f"imitation round {r + 1}: {len(rows)} decisions, "
            f"agrees with the expert on {agree:.1%}",
            flush=True,
        )
    mean, lo, hi = evaluate(net, args.eval_deals, "greedy")
    print(
        f"after imitation: {mean:+.2f} [{lo:+.2f}, {hi:+.2f}] points per hand better than "
        "greedy in its seat, against three greedy",
        flush=True,
    )
    episodes = reinforce(net, args.reinforce_seconds, 1e-3, args.seed)
    mean, lo, hi = evaluate(net, args.eval_deals, "greedy")
    print(
        f"after {episodes} hands of policy gradient: {mean:+.2f} [{lo:+.2f}, {hi:+.2f}]", flush=True
    )
    net.save(args.out)
    print(
        f"wrote {args.out} ({args.out.stat().st_size} bytes) in "
        f"{time.monotonic() - started:.0f} s wall, "
        f"{time.process_time() - cpu:.0f} s CPU"
    )


if __name__ == "__main__":
    main()
