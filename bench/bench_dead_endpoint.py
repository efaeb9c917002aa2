#!/usr/bin/env python3
"""How long a match takes when a model seat's endpoint never answers, with the seat's
pause (``limits.pause_after_failures``, default 3) and without it (0: every move asks
and spends its retries: the same run's reference).

    python bench/bench_dead_endpoint.py                      # 1 hand, 2 rounds
    python bench/bench_dead_endpoint.py --hands 2 --rounds 3

Each round runs ``referee match`` as a user does: the model seat's endpoint is a closed
loopback port (every call refused at once; each question then waits out its back-off,
1+2+4+8 s with the default 4 retries), three greedy bots, the same seed for both. Prints
the wall time of each, their ratio, and the seat's line of the summary.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFEREE = Path(sys.executable).parent / "referee"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def settings(folder: Path, name: str, pause_after: int) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\n[endpoint]\nurl = "http://127.0.0.1:{closed_port()}/v1"\n'
        f'model = "none"\n[limits]\npause_after_failures = {pause_after}\n'
    )
    return path


def play(folder: Path, model: Path, hands: int, seed: str) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(
        [str(REFEREE), "match", "--bot", f"llm:{model}", *["--bot", "greedy"] * 3,
         "--hands", str(hands), "--seed", seed, "--log-dir", str(folder / model.stem)],
        capture_output=True, text=True, check=False, cwd=folder,
    )  # fmt: skip
    took = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"referee match failed ({done.returncode}): {done.stderr.strip()}")
    line = next((x for x in done.stdout.splitlines() if x.startswith("seat 0 model")), "")
    return took, line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-dead-") as tmp:
        folder = Path(tmp)
        for r in range(args.rounds):
            seed = f"dead-endpoint-{r}"
            paused, line = play(folder, settings(folder, f"paused{r}", 3), args.hands, seed)
            asking, ref_line = play(folder, settings(folder, f"asking{r}", 0), args.hands, seed)
            print(
                f"round {r + 1}: paused {paused:.1f} s, asking every move (reference) "
                f"{asking:.1f} s: ratio {paused / asking:.2f}"
            )
            print(f"  paused:    {line}")
            print(f"  reference: {ref_line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
