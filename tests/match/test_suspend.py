"""A server stopped at once still stops: a resumed match whose task never ran is closed."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sim import MS, T0, Sim, settings

from referee.log.writer import EventLogWriter
from referee.server.registry import MatchRegistry

MATCH_ID = "20261201-000000-5e5e5e5e"


async def test_stopping_right_after_resuming_does_not_hang(tmp_path: Path) -> None:
    logs, state = tmp_path / "logs", tmp_path / "state"
    logs.mkdir()
    sim = Sim(settings("pusoy-dos", hands=3, turn_time_ms=1000))
    sim.connect_all(T0)
    t = T0
    while len(sim.log) < 60:
        t += 5 * MS
        sim.play_lowest(t)
    writer = EventLogWriter.create(logs / f"{MATCH_ID}.jsonl", MATCH_ID)
    groups: list[tuple[object, list, int]] = []
    for cmd, event, at in sim.log:
        if groups and groups[-1][0] is cmd:
            groups[-1][1].append(event)
        else:
            groups.append((cmd, [event], at))
    for cmd, events, at in groups:
        writer.append(events, at, cmd)  # type: ignore[arg-type]
    writer.close()
    (state / "seeds").mkdir(parents=True)
    (state / "seeds" / f"{MATCH_ID}.seed").write_text(sim.settings.seed)

    registry = MatchRegistry(logs, state)
    assert [r.match_id for r in registry.resume_all()] == [MATCH_ID]
    # No await between resuming and stopping: the match's task has not taken a step.
    async with asyncio.timeout(10):  # (wait_for would start a task: a step for the match)
        await registry.suspend()
    host = registry.get(MATCH_ID)
    assert host is not None and host.done.is_set()
