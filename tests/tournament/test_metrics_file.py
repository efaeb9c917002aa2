"""A tournament writes its referee's metrics (the figures `referee serve` exposes) to
metrics.prom at its end; they agree with the logs it recorded."""

from __future__ import annotations

from collections import Counter

from prometheus_client.parser import text_string_to_metric_families

from referee.log import read_log
from referee.tournament.director import Tournament
from referee.tournament.toml_reader import load_config

from .conftest import bot_entry, write_config


async def test_a_tournament_writes_the_referee_metrics_at_its_end(tmp_path):
    bots = [bot_entry(n, builtin=b) for n, b in zip("abcd", ["greedy", "random"] * 2, strict=True)]
    config = load_config(
        write_config(tmp_path, bots, tournament={"rounds": 1, "seatings": "rotations"})
    )
    summary = await Tournament(config).run()
    assert (summary.total, summary.done) == (4, 4)

    logged: Counter[str] = Counter()
    for path in (config.output / "logs").glob("*.jsonl"):
        for line in read_log(path).lines:
            logged[line.entry.event.WhichOneof("kind")] += 1
    text = (config.output / "metrics.prom").read_text()
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    for kind, count in logged.items():
        assert samples[("pusoy_referee_events_total", (("type", kind),))] == count, kind
    assert samples[("pusoy_referee_matches_created_total", ())] == 4
    assert samples[("pusoy_referee_matches_ended_total", (("status", "finished"),))] == 4
    assert samples[("pusoy_referee_moves_total", (("move", "play"),))] == logged["played"]
    assert samples[("pusoy_referee_connected_seats", ())] == 0
