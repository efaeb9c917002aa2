#!/usr/bin/env python3
"""Train the example policy (policy.py) on one core with numpy: by imitation of logged
games, then by policy gradient in the environment; and evaluate it on duplicate deals.

    referee tournament examples/rl/logs.toml                 # games to learn from
    referee dataset examples/rl/logs-results -o examples/rl/games.parquet
    python examples/rl/train.py imitate examples/rl/games.parquet --bot greedy -o policy.npz
    python examples/rl/train.py reinforce --init policy.npz --seconds 300 -o policy.npz
    python examples/rl/train.py evaluate policy.npz --against random greedy

``evaluate`` plays the policy and a baseline (the untrained policy, or ``--baseline``)
on the same deals, in the same seat, against the same opponents, and reports the mean
difference per match with its 95% confidence interval (referee.tournament.stats).
The PyTorch path is train_torch.py (optional: only where torch is installed).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy import Adam, Policy

from referee.rl import OpponentPool, SeatEnv
from referee.tournament.stats import paired


class Progress:
    """A line on stderr now and then (every ``every_s`` seconds, and at the first call),
    so a long run shows it is alive and how it goes; ``every_s`` < 0: silent."""

    def __init__(self, every_s: float) -> None:
        self.every_s = every_s
        self.next = time.monotonic()

    def due(self) -> bool:
        return self.every_s >= 0 and time.monotonic() >= self.next

    def say(self, line: str) -> None:
        if self.every_s >= 0:
            print(line, file=sys.stderr, flush=True)
            self.next = time.monotonic() + self.every_s


QUIET = Progress(-1)


def imitate(
    data: Path,
    bots: list[str],
    policy: Policy,
    *,
    epochs: int,
    lr: float,
    seed: int,
    max_rows: int = 0,
    progress: Progress = QUIET,
) -> dict[str, float]:
    """Fit the policy to the actions of the named bots in a ``referee dataset`` file."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(
        data, columns=["bot", "observation", "action_mask", "action", "default_cause"]
    )
    keep = pc.equal(table["default_cause"], "")
    if bots:
        keep = pc.and_(keep, pc.is_in(table["bot"], value_set=_pa_strings(bots)))
    table = table.filter(keep)
    if max_rows:
        table = table.slice(0, max_rows)
    n = table.num_rows
    if n == 0:
        raise SystemExit(f"no rows of {bots} in {data}")
    obs = table["observation"].combine_chunks().flatten().to_numpy().reshape(n, -1)
    masks = table["action_mask"].combine_chunks().flatten().to_numpy().reshape(n, -1)
    actions = table["action"].to_numpy()
    rng = np.random.default_rng(seed)
    opt = Adam(policy.params, lr)
    batch = 64
    for epoch in range(epochs):
        order = rng.permutation(n)
        for start in range(0, n, batch):
            if progress.due():
                progress.say(f"imitate: epoch {epoch + 1} of {epochs}, row {start:,} of {n:,}")
            grads = {k: np.zeros_like(v) for k, v in policy.params.items()}
            for i in order[start : start + batch]:
                legal = np.flatnonzero(masks[i])
                p, cache = policy.probabilities(obs[i], legal)
                chosen = int(np.flatnonzero(legal == actions[i])[0])
                for k, g in policy.grad_log_prob(cache, p, chosen).items():
                    grads[k] += g / batch
            opt.ascend(policy.params, grads)
    hits = 0
    for i in range(min(n, 2000)):
        legal = np.flatnonzero(masks[i])
        p, _ = policy.probabilities(obs[i], legal)
        hits += int(legal[p.argmax()] == actions[i])
    return {"rows": n, "agreement": hits / min(n, 2000)}


def _pa_strings(values: list[str]) -> Any:
    import pyarrow as pa

    return pa.array(values)


def reinforce(
    policy: Policy,
    *,
    profile: str,
    opponents: list[str],
    seconds: float,
    lr: float,
    seed: int,
    snapshot_every: int = 0,
    max_hands: int = 0,
    progress: Progress = QUIET,
) -> dict[str, float]:
    """REINFORCE with a running baseline: each decision is credited with its hand's
    reward. With ``snapshot_every``, a frozen copy joins the opponents that often (hands)."""
    pool = OpponentPool({name: 1.0 for name in opponents})
    env = SeatEnv(profile, opponents=pool)
    rng = np.random.default_rng(seed)
    opt = Adam(policy.params, lr)
    baseline, hands, batch_hands = 0.0, 0, 16
    grads = {k: np.zeros_like(v) for k, v in policy.params.items()}
    trace: list[tuple[Any, np.ndarray, int]] = []
    rewards: list[float] = []
    started = time.monotonic()
    end = started + seconds
    episode = 0
    limit = f"{max_hands:,} hands or {seconds:g} s" if max_hands else f"{seconds:g} s"
    while time.monotonic() < end and not (max_hands and hands >= max_hands):
        if progress.due():
            recent = f"{np.mean(rewards[-200:]):+.2f}" if rewards else "none yet"
            progress.say(
                f"reinforce: {hands:,} hands in {time.monotonic() - started:.0f} s (up to "
                f"{limit}); mean reward of the last 200 hands: {recent}"
            )
        obs, info = env.reset(seed=seed * 100_003 + episode)
        episode += 1
        hand = info["hand_number"]
        done = False
        while not done:
            legal = np.flatnonzero(obs["action_mask"])
            p, cache = policy.probabilities(obs["observation"], legal)
            i = int(rng.choice(len(legal), p=p))
            trace.append((cache, p, i))
            obs, reward, terminated, truncated, info = env.step(int(legal[i]))
            done = terminated or truncated
            if info["hand_number"] != hand or done:  # a hand ended: credit its decisions
                hand = info["hand_number"]
                r = float(reward) / 13
                advantage = r - baseline
                baseline += 0.02 * (r - baseline)
                for cache_i, p_i, chosen in trace:
                    for k, g in policy.grad_log_prob(cache_i, p_i, chosen).items():
                        grads[k] += advantage * g
                trace = []
                rewards.append(float(reward))
                hands += 1
                if hands % batch_hands == 0:
                    opt.ascend(policy.params, {k: g / batch_hands for k, g in grads.items()})
                    grads = {k: np.zeros_like(v) for k, v in policy.params.items()}
                if snapshot_every and hands % snapshot_every == 0:
                    frozen = Policy()
                    frozen.params = {k: v.copy() for k, v in policy.params.items()}
                    pool.add(f"self-{hands}", frozen, weight=1.0)
    return {"hands": hands, "mean_reward_last_200": float(np.mean(rewards[-200:] or [0]))}


def match_scores(
    policy: Any, *, profile: str, opponent: str, deals: int, hands: int, seed: int
) -> list[float]:
    """The policy's total reward in each of ``deals`` matches (deal d: the same cards,
    seat and opponents for whichever policy plays it)."""
    env = SeatEnv(profile, opponents=opponent, match_end=f"hands {hands}")
    out = []
    for d in range(deals):
        obs, _ = env.reset(seed=seed + d, options={"deal_seed": f"evaluate-{seed}-{d}"})
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(policy(obs))
            total += float(reward)
            done = terminated or truncated
        out.append(total)
    return out


def evaluate(
    policy: Any,
    baseline: Any,
    *,
    profile: str,
    opponent: str,
    deals: int,
    hands: int,
    seed: int,
) -> dict[str, Any]:
    mine = match_scores(
        policy, profile=profile, opponent=opponent, deals=deals, hands=hands, seed=seed
    )
    theirs = match_scores(
        baseline, profile=profile, opponent=opponent, deals=deals, hands=hands, seed=seed
    )
    result = paired([a - b for a, b in zip(mine, theirs, strict=True)])
    return {
        "opponent": opponent,
        "deals": deals,
        "policy_mean": float(np.mean(mine)),
        "baseline_mean": float(np.mean(theirs)),
        "difference": result.mean,
        "ci95": [result.ci95_low, result.ci95_high],
        "likelihood_of_superiority": result.los,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    im = sub.add_parser("imitate", help="fit the policy to logged decisions")
    im.add_argument("data", type=Path, help="a referee dataset Parquet file")
    im.add_argument(
        "--bot",
        action="append",
        default=[],
        help="learn from this bot (seat name); default: every row",
    )
    im.add_argument("--epochs", type=int, default=3)
    im.add_argument("--max-rows", type=int, default=0)
    im.add_argument("--lr", type=float, default=3e-3)
    rl = sub.add_parser("reinforce", help="policy gradient in the pusoy/Seat-v0 environment")
    rl.add_argument("--seconds", type=float, default=300, help="stop after this long ...")
    rl.add_argument(
        "--hands", type=int, default=0, help="... or this many hands (repeatable from the seed)"
    )
    rl.add_argument("--opponents", nargs="+", default=["random", "greedy"])
    rl.add_argument(
        "--snapshot-every",
        type=int,
        default=0,
        help="self-play: add a frozen copy to the opponents every N hands",
    )
    rl.add_argument("--lr", type=float, default=1e-3)
    for p in (im, rl):
        p.add_argument("--init", type=Path, help="start from this policy file")
        p.add_argument("-o", "--out", type=Path, required=True)
    ev = sub.add_parser("evaluate", help="duplicate deals against a baseline, with a 95% CI")
    ev.add_argument("policy", type=Path)
    ev.add_argument("--baseline", type=Path, help="default: the untrained policy")
    ev.add_argument("--against", nargs="+", default=["random", "greedy"])
    ev.add_argument("--deals", type=int, default=200)
    ev.add_argument("--hands", type=int, default=4, help="hands per match")
    for p in (im, rl, ev):
        p.add_argument("--profile", default="big-two")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--json", action="store_true", help="print the result as JSON")
        p.add_argument(
            "--progress-s",
            type=float,
            default=10.0,
            metavar="S",
            help="a progress line on stderr every S seconds (default 10; -1: none)",
        )
    args = parser.parse_args(argv)
    progress = Progress(args.progress_s)

    if args.command == "evaluate":
        policy = Policy.load(args.policy)
        baseline = Policy.load(args.baseline) if args.baseline else Policy(seed=args.seed)
        results = []
        for o in args.against:
            progress.say(f"evaluate: {args.deals} duplicate deals against 3 x {o}")
            results.append(
                evaluate(
                    policy,
                    baseline,
                    profile=args.profile,
                    opponent=o,
                    deals=args.deals,
                    hands=args.hands,
                    seed=args.seed,
                )
            )
        if args.json:
            print(json.dumps(results))
        for r in results:
            lo, hi = r["ci95"]
            print(
                f"against 3 x {r['opponent']}: {r['difference']:+.2f} per match "
                f"(95% CI {lo:+.2f} .. {hi:+.2f}) over {r['deals']} duplicate deals; "
                f"policy {r['policy_mean']:+.2f}, baseline {r['baseline_mean']:+.2f}",
                file=sys.stderr if args.json else sys.stdout,
            )
        return 0
    policy = Policy.load(args.init) if args.init else Policy(seed=args.seed)
    start = time.monotonic()
    if args.command == "imitate":
        stats = imitate(
            args.data,
            args.bot,
            policy,
            epochs=args.epochs,
            lr=args.lr,
            seed=args.seed,
            max_rows=args.max_rows,
            progress=progress,
        )
    else:
        stats = reinforce(
            policy,
            profile=args.profile,
            opponents=args.opponents,
            seconds=args.seconds,
            lr=args.lr,
            seed=args.seed,
            snapshot_every=args.snapshot_every,
            max_hands=args.hands,
            progress=progress,
        )
    policy.save(args.out)
    stats["seconds"] = round(time.monotonic() - start, 1)
    print(json.dumps(stats) if args.json else f"{args.out}: {stats}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
