#!/usr/bin/env python3
"""What the Prometheus metrics cost per decision, against the decision itself.

Plays one match (`referee match`, built-in bots), then replays its decisions in-process:

* metrics: ``MatchMetrics.decided`` for each decision (what the match host calls after
  delivering one), the work the metrics add;
* reference, the same run: ``decide`` again for each logged command (the match
  machine's own work for that decision) and appending its entries to a log file (what
  the host does before delivering), both without metrics.

Also times one scrape (``/metrics`` rendered) of the counters after the match. Prints
microseconds per decision, best of ``--repeat`` passes, and the ratio.

    python bench/bench_metrics.py                   # a 20-hand match, 5 passes
    python bench/bench_metrics.py --hands 50 --repeat 9
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.log.reader import decisions, read_log  # noqa: E402
from referee.log.writer import EventLogWriter, FsyncPolicy  # noqa: E402
from referee.match.machine import Decision, decide  # noqa: E402
from referee.match.state import MachineState, evolve, fold  # noqa: E402
from referee.protocol.convert import ts_us  # noqa: E402
from referee.server.metrics import Metrics  # noqa: E402


def play(folder: Path, hands: int) -> Path:
    subprocess.run(
        [
            sys.executable, "-m", "referee.cli", "match", "--profile", "big-two",
            "--hands", str(hands), "--seed", "bench-metrics", "--log-dir", str(folder),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    (log,) = folder.glob("*.jsonl")
    return log


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = play(Path(tmp), args.hands)
        read = read_log(path)
        groups = list(decisions(read.lines))
        seed = read.lines[-1].entry.event.match_ended.seed
        first = read.lines[0].entry
        state = fold(first.match_id, [(first.event, ts_us(first.time))], seed)
        cases: list[tuple[MachineState, Decision]] = []
        for command, group in groups[1:]:
            assert command is not None
            before = state.clone()
            now = ts_us(group[0].entry.time)
            for line in group:
                evolve(state, line.entry.event, ts_us(line.entry.time))
            events = tuple(line.entry.event for line in group)
            cases.append((before, Decision(command, now, events, state.clone())))
        n = len(cases)

        def metrics_pass() -> float:
            handle = Metrics().match(cases[0][0])
            started = time.perf_counter()
            for _, decision in cases:
                handle.decided(decision, 1e-5, 1e-4)
            return time.perf_counter() - started

        def decide_pass() -> float:
            started = time.perf_counter()
            for before, decision in cases:
                decide(before, decision.command, decision.now)
            return time.perf_counter() - started

        def append_pass() -> float:
            out = Path(tmp) / "append.jsonl"
            out.unlink(missing_ok=True)
            writer = EventLogWriter.create(out, first.match_id, FsyncPolicy.NEVER)
            writer.append([first.event], ts_us(first.time), first.command)
            started = time.perf_counter()
            for _, decision in cases:
                writer.append(list(decision.events), decision.now, decision.command)
            took = time.perf_counter() - started
            writer.close()
            return took

        best = {"metrics": 1e9, "decide": 1e9, "append": 1e9}
        for _ in range(args.repeat):
            for name, run in (
                ("metrics", metrics_pass),
                ("decide", decide_pass),
                ("append", append_pass),
            ):
                best[name] = min(best[name], run())
        metrics = Metrics()
        handle = metrics.match(cases[0][0])
        for _, decision in cases:
            handle.decided(decision, 1e-5, 1e-4)
        started = time.perf_counter()
        body, _ = metrics.exposition()
        scrape_ms = (time.perf_counter() - started) * 1000

    us = {k: v / n * 1e6 for k, v in best.items()}
    reference = us["decide"] + us["append"]
    print(f"{n} decisions ({len(read.lines)} log entries), best of {args.repeat} passes")
    print(f"  metrics per decision:            {us['metrics']:7.2f} µs")
    print(f"  reference: decide per decision:  {us['decide']:7.2f} µs")
    print(f"  reference: log append per decision: {us['append']:5.2f} µs")
    print(f"  metrics / (decide + append):     {us['metrics'] / reference:7.1%}")
    print(f"  one scrape: {scrape_ms:.2f} ms, {len(body)} bytes")


if __name__ == "__main__":
    main()
