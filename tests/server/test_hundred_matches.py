"""100 matches at once on one referee: the CI version of bench/bench_thousand.py.

The same code path as the benchmark: a real ``referee serve`` process with its match
limits raised by option, the Go kit's ``pusoy-seats`` playing the 400 seats from two
processes (one connection per seat), then every log verified with the server's public
key by ``referee verify``. One hand per match keeps it within about a minute here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_thousand.py"


def load_bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_thousand", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_thousand"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_hundred_matches_at_once_all_finish_with_verified_logs_and_no_timeouts():
    bench = load_bench()
    (fig,) = bench.run(100, ["live"], hands=1, bot_processes=2)
    assert fig.bot_errors == []
    assert fig.finished == 100
    assert fig.verify_failures == []
    assert fig.verified == 100
    assert fig.defaults == {}, "the referee played some seats by default"
    assert fig.disconnects == 0
    assert fig.moves > 100 * 20
    assert len(fig.latencies_ms) >= fig.moves - 100 * 2
    assert fig.peak_fds >= fig.idle_fds + 4 * 100  # every seat had its own connection
