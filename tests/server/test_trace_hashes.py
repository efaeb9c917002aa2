"""Action.trace_sha256 over real gRPC: a well-formed hash is logged in the action's
command (the trace's binding, docs/log-format.md section 3) and changes no verdict; any
other value makes the action MALFORMED_ACTION, its value never logged."""

from __future__ import annotations

import asyncio
import json

from referee.log.verify import verify_log
from referee.protocol import common, match_service, play_service

from .conftest import Seat, create, entry_lines, log_path

GOOD = "ab" * 32
BAD = ("AB" * 32, "ab" * 31, "zz" * 32, GOOD + "0")


def with_trace(turn_id: int, cards: list[str], trace: str) -> play_service.PlayRequest:
    action = play_service.Action(turn_id=turn_id, trace_sha256=trace)
    action.play.cards.extend(cards)
    return play_service.PlayRequest(action=action)


async def test_a_trace_hash_is_logged_and_a_bad_one_is_a_malformed_action(server, organiser):
    created = await create(organiser, fault_policy={"max_rejections_per_turn": 10})
    seats = [Seat(server.address, token, policy=None).start() for token in created.seat_tokens]
    waits = {asyncio.create_task(s.wait_kind("prompt")): s for s in seats}
    done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    first = done.pop()
    leader, prompt = waits[first], first.result()
    lowest = list(prompt.legal_plays[0].cards)
    for n, bad in enumerate(BAD):
        leader.send(with_trace(prompt.turn_id, lowest, bad))
        result = await leader.wait_kind("result", after=n)
        assert result.reason == common.REJECTION_REASON_MALFORMED_ACTION, bad
    leader.send(with_trace(prompt.turn_id, lowest, GOOD))
    assert (await leader.wait_kind("result", after=len(BAD))).accepted
    cancel = match_service.CancelMatchRequest(match_id=created.match_id, reason="enough")
    await organiser.CancelMatch(cancel)
    for s in seats:
        await s.finish()
    path = log_path(server, created.match_id)
    lines = [json.loads(x) for x in entry_lines(path)]
    actions = [e["command"]["action"] for e in lines if "action" in e.get("command", {})]
    assert all(a.get("malformed") and "trace_sha256" not in a for a in actions[: len(BAD)])
    assert actions[len(BAD)]["trace_sha256"] == GOOD
    assert verify_log(path).ok
