#!/usr/bin/env python3
"""The optional PyTorch path: the same policy (policy.py's features and network),
trained by imitation with torch, saved in policy.py's file format so that
policy_bot.py and train.py evaluate use it unchanged.

    pip install torch
    python examples/rl/train_torch.py examples/rl/games.parquet --bot greedy -o policy.npz

Without torch it says so and exits with status 3: the numpy path (train.py) needs
nothing more. (This project's CI has no torch: this file's training is not run there.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy import FEATURES, Policy, features

try:
    import torch
except ModuleNotFoundError:
    torch = None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Imitation with PyTorch (optional).")
    parser.add_argument("data", type=Path, help="a referee dataset Parquet file")
    parser.add_argument("--bot", action="append", default=[])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if torch is None:
        print(
            "train_torch.py: PyTorch is not installed (pip install torch); the numpy "
            "path, train.py, trains the same policy without it",
            file=sys.stderr,
        )
        return 3
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(args.data, columns=["bot", "observation", "action_mask", "action"])
    if args.bot:
        table = table.filter(
            pc.is_in(table["bot"], value_set=__import__("pyarrow").array(args.bot))
        )
    n = table.num_rows
    obs = table["observation"].combine_chunks().flatten().to_numpy().reshape(n, -1)
    masks = table["action_mask"].combine_chunks().flatten().to_numpy().reshape(n, -1)
    actions = table["action"].to_numpy()
    torch.manual_seed(args.seed)
    net = torch.nn.Sequential(
        torch.nn.Linear(FEATURES, args.hidden),
        torch.nn.Tanh(),
        torch.nn.Linear(args.hidden, 1, bias=False),
    )
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    rng = np.random.default_rng(args.seed)
    for _ in range(args.epochs):
        for i in rng.permutation(n):
            legal = np.flatnonzero(masks[i])
            x = torch.tensor(features(obs[i], legal), dtype=torch.float32)
            target = torch.tensor([int(np.flatnonzero(legal == actions[i])[0])])
            loss = torch.nn.functional.cross_entropy(net(x).T, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
    policy = Policy(hidden=args.hidden)
    policy.params = {
        "W1": net[0].weight.detach().numpy().T.astype(np.float64),
        "b1": net[0].bias.detach().numpy().astype(np.float64),
        "w2": net[2].weight.detach().numpy()[0].astype(np.float64),
    }
    policy.save(args.out)
    print(f"{args.out}: {n} rows, {args.epochs} epochs (PyTorch)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
