"""A short run of the fuzz benchmark (bench/bench_fuzz.py) against `referee serve`:
2,000 mutated messages over real sockets (every RPC, raw bytes, byte and field mutations,
fuzzing seats in three live matches), then health, stderr, descriptors, the fuzzer's
own errors and every log's signature are checked by the benchmark itself (it exits 1 on
any failure). Stalls are reported, not asserted: timing belongs to the benchmark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_fuzzing_the_server_leaves_it_whole():
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "bench_fuzz.py"),
            *("--messages", "2000", "--rate", "80", "--seconds", "120", "--seed", "7"),
            *("--matches", "3", "--workers", "8"),
            "--report-stalls",  # latency is the benchmark's to measure, not a test's
        ],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mutated messages" in done.stdout
    assert done.stdout.rstrip().endswith("OK")
