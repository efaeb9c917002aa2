#!/usr/bin/env python3
"""How long each compiled kit's build and tests take in a fresh clone, with an empty
build cache (a new machine) and with the cache a previous clone left (a new clone on a
machine that built the kits before): what tests/kits' first test of each kit runs,
``clients/<kit>/build.sh`` then ``clients/<kit>/test.sh``.

    python bench/bench_kit_builds.py                       # go rust cpp java typescript
    python bench/bench_kit_builds.py --kits go rust --before e6f14c8

Per kit: a new clone of HEAD (or --commit) and an empty cache folder
(``XDG_CACHE_HOME``, so ``PUSOY_BUILD_CACHE`` defaults into it): the cold run; then
another new clone with the same cache: the warm run. With --before REV the same kit is
also built and tested in a new clone of REV first (a commit whose kits cache inside the
clone: its figure is what every fresh clone paid), so each row carries its own
reference. The download caches outside the clone (~/.m2, ~/.cargo/registry, pip's) are
the machine's and are not emptied: the first run on a machine also downloads.

Wall and CPU seconds (the build's own processes: user + system of the children), so a
busy shared machine shows in wall time and not in CPU. Clones and caches are deleted
at the end.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KITS = ["go", "rust", "cpp", "java", "typescript"]


def timed(cmd: list[str], env: dict[str, str], log: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of ``cmd``; its output goes to ``log``; fails loudly."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with log.open("a") as out:
        done = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {done.returncode}); see {log}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(tmp: Path, name: str, commit: str, kit: str, cache: Path) -> list[float]:
    """[build wall, build CPU, test wall, test CPU] in a new clone of ``commit``."""
    clone = tmp / name
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", commit], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSOY_")}
    env.update(XDG_CACHE_HOME=str(cache), PUSOY_CONFORMANCE_PYTHON=sys.executable)
    log = tmp / f"{name}.log"
    kit_dir = clone / "clients" / kit
    figures = [*timed(["bash", str(kit_dir / "build.sh")], env, log)]
    figures += timed(["bash", str(kit_dir / "test.sh")], env, log)
    subprocess.run(["rm", "-rf", str(clone)], check=True)
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kits", nargs="+", default=KITS, choices=KITS)
    ap.add_argument("--commit", default="HEAD", help="the kits to measure (default HEAD)")
    ap.add_argument("--before", help="a commit to measure first, as the reference")
    args = ap.parse_args()
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", args.commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(
        f"{'kit':10} {'run':7} {'build s':>8} {'CPU s':>6} {'test s':>7} {'CPU s':>6}"
        f" {'total s':>8}  against cold"
    )
    for kit in args.kits:
        with tempfile.TemporaryDirectory(prefix=f"bench-kit-{kit}-") as t:
            tmp = Path(t)
            rows = []
            if args.before:
                rows.append(("before", run(tmp, "before", args.before, kit, tmp / "cache0")))
            rows.append(("cold", run(tmp, "cold", commit, kit, tmp / "cache")))
            rows.append(("warm", run(tmp, "warm", commit, kit, tmp / "cache")))
            cold = rows[-2][1][0] + rows[-2][1][2]
            for name, (bw, bc, tw, tc) in rows:
                print(
                    f"{kit:10} {name:7} {bw:8.0f} {bc:6.0f} {tw:7.0f} {tc:6.0f} {bw + tw:8.0f}"
                    f"  {(bw + tw) / cold:.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
