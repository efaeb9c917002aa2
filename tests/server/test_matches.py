"""Full matches over real gRPC, and verification of their logs (and of tampered copies)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from referee.bots import GreedyBot, RandomBot, play_seat
from referee.log import read_log
from referee.log.replay import replay_lines
from referee.log.verify import verify_log
from referee.protocol import common, match_service
from referee.server.app import RefereeServer

from .conftest import create, entry_lines, log_path, rechained


async def play_sample_match(
    server: RefereeServer, organiser: object, profile: str, hands: int, seed: str, **kw: object
) -> match_service.MatchInfo:
    created = await create(organiser, profile=profile, hands=hands, seed=seed, **kw)  # type: ignore[arg-type]
    bots = [GreedyBot(), RandomBot(1), GreedyBot(), RandomBot(2)]
    outcomes = await asyncio.gather(
        *(play_seat(b, server.address, t) for b, t in zip(bots, created.seat_tokens, strict=True))
    )
    assert all(o.ended is not None for o in outcomes)
    info = await organiser.GetMatch(match_service.GetMatchRequest(match_id=created.match_id))  # type: ignore[attr-defined]
    return info.match


@pytest.mark.parametrize("profile", ["pusoy-dos", "pusoy-dos-chips", "big-two"])
async def test_full_match_of_each_profile_verifies(server, organiser, profile):
    info = await play_sample_match(server, organiser, profile, hands=4, seed=f"full-{profile}")
    assert info.status == common.MATCH_STATUS_FINISHED
    assert info.hands_played == 4
    assert len(info.standings) == 4
    report = verify_log(server.matches.log_path(info.match_id))
    assert report.ok, report.summary()
    assert report.hands == 4
    read = read_log(server.matches.log_path(info.match_id))
    assert read.complete
    text = "\n".join(replay_lines(read))
    assert "Hand 4" in text and "Match finished" in text


async def test_pusoy_dos_default_match_ends_at_threshold(server, organiser):
    created = await create(organiser, profile="pusoy-dos", hands=0, seed="threshold")
    await asyncio.gather(*(play_seat(GreedyBot(), server.address, t) for t in created.seat_tokens))
    info = (
        await organiser.GetMatch(match_service.GetMatchRequest(match_id=created.match_id))
    ).match
    assert max(info.totals) >= 30
    assert verify_log(server.matches.log_path(info.match_id)).ok


async def test_seed_is_committed_then_revealed(server, organiser):
    info = await play_sample_match(server, organiser, "big-two", hands=1, seed="my seed")
    lines = read_log(server.matches.log_path(info.match_id)).lines
    created = lines[0].entry.event.match_created
    ended = lines[-1].entry.event.match_ended
    import hashlib

    assert created.seed_commitment == hashlib.sha256(b"my seed").hexdigest()
    assert ended.seed == "my seed"
    assert info.seed_commitment == created.seed_commitment


async def test_os_random_seed_when_none_given(server, organiser):
    a = await create(organiser, hands=1)
    b = await create(organiser, hands=1)
    assert a.seed_commitment != b.seed_commitment
    for created in (a, b):
        await organiser.CancelMatch(match_service.CancelMatchRequest(match_id=created.match_id))


@pytest.fixture
async def finished_log(server, organiser, tmp_path) -> Path:
    """A finished match's log without its signature trailer (the rules' checks alone)."""
    info = await play_sample_match(server, organiser, "big-two", hands=2, seed="tamper")
    path = tmp_path / "unsigned.jsonl"
    path.write_text("".join(line + "\n" for line in entry_lines(log_path(server, info.match_id))))
    return path


def _rewrite(path: Path, lines: list[str], tmp_path: Path) -> Path:
    out = tmp_path / "tampered.jsonl"
    out.write_text("".join(line + "\n" for line in lines))
    return out


def test_verify_fails_on_an_edited_line(finished_log, tmp_path):
    lines = finished_log.read_text().splitlines()
    idx = next(i for i, line in enumerate(lines) if '"played"' in line)
    data = json.loads(lines[idx])
    data["event"]["played"]["elapsed_ms"] = data["event"]["played"].get("elapsed_ms", 0) + 1
    lines[idx] = json.dumps(data, separators=(",", ":"))
    report = verify_log(_rewrite(finished_log, lines, tmp_path))
    assert not report.ok
    assert report.line == idx + 2  # the next line's prev_hash no longer matches


def test_verify_fails_on_an_edited_line_with_rechained_hashes(finished_log, tmp_path):
    """A forger who recomputes the chain is still caught by the rules."""
    lines = finished_log.read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    idx = next(
        i
        for i, e in enumerate(entries)
        if "played" in e["event"] and len(e["event"]["played"]["play"]["cards"]) == 1
    )
    entries[idx]["event"]["played"]["play"]["cards"] = ["2S"]
    report = verify_log(_rewrite(finished_log, rechained(entries).splitlines(), tmp_path))
    assert not report.ok
    assert report.line is not None and report.line >= idx + 1


def test_verify_fails_on_a_removed_line(finished_log, tmp_path):
    lines = finished_log.read_text().splitlines()
    del lines[10]
    report = verify_log(_rewrite(finished_log, lines, tmp_path))
    assert not report.ok
    assert report.line == 11


def test_verify_fails_on_reordered_lines(finished_log, tmp_path):
    lines = finished_log.read_text().splitlines()
    lines[20], lines[21] = lines[21], lines[20]
    report = verify_log(_rewrite(finished_log, lines, tmp_path))
    assert not report.ok
    assert report.line == 21


def test_verify_reports_a_log_cut_short(finished_log, tmp_path):
    data = finished_log.read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(data[: len(data) // 2])
    report = verify_log(cut)
    assert not report.ok
    assert "incomplete" in (report.problem or "")
    read = read_log(cut)
    assert read.truncated and not read.complete


def test_verify_fails_when_the_seed_does_not_match(finished_log, tmp_path):
    lines = finished_log.read_text().splitlines()
    last = json.loads(lines[-1])
    last["event"]["match_ended"]["seed"] = "another seed"
    lines[-1] = json.dumps(last, separators=(",", ":"))
    report = verify_log(_rewrite(finished_log, lines, tmp_path))
    assert not report.ok and report.line == len(lines)
    assert "commitment" in (report.problem or "")


async def test_organiser_can_list_get_cancel_and_fetch_the_log(server, organiser):
    created = await create(organiser, hands=3, seed="cancel me")
    listed = await organiser.ListMatches(match_service.ListMatchesRequest())
    assert created.match_id in [m.match_id for m in listed.matches]
    got = await organiser.GetMatch(match_service.GetMatchRequest(match_id=created.match_id))
    assert got.match.status == common.MATCH_STATUS_WAITING
    cancelled = await organiser.CancelMatch(
        match_service.CancelMatchRequest(match_id=created.match_id, reason="testing")
    )
    assert cancelled.match.status == common.MATCH_STATUS_CANCELLED
    lines = [
        r.line
        async for r in organiser.GetMatchLog(
            match_service.GetMatchLogRequest(match_id=created.match_id)
        )
    ]
    last = json.loads(lines[-2])["event"]["match_ended"]  # lines[-1]: the trailer
    assert last["status"] == "MATCH_STATUS_CANCELLED" and last["cancel_reason"] == "testing"
    assert last["seed"] == "cancel me"
    assert verify_log(server.matches.log_path(got.match.match_id)).ok
    running = await organiser.ListMatches(
        match_service.ListMatchesRequest(status=common.MATCH_STATUS_CANCELLED)
    )
    assert [m.match_id for m in running.matches] == [created.match_id]


async def test_bad_match_requests_are_refused_with_invalid_argument(server, organiser):
    import grpc

    for kwargs in (
        {"profile": "poker"},
        {"options": {"revolution": "maybe"}},
        {"options": {"no_such_option": "1"}},
        {"seat_names": ["a", "b"]},
        {"hands": 2, "threshold": 30},
    ):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await create(organiser, **kwargs)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await organiser.GetMatch(match_service.GetMatchRequest(match_id="nope"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


async def test_a_match_whose_log_cannot_be_created_is_refused_and_the_server_goes_on(
    server, organiser
):
    import grpc

    log_dir = server.matches.log_dir
    log_dir.rmdir()
    log_dir.write_text("a file where the log folder should be\n")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await create(organiser, seed="nolog")
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    details = err.value.details() or ""
    assert "cannot create the match's event log" in details
    assert str(log_dir) not in details  # no server path in an answer
    listed = await organiser.ListMatches(match_service.ListMatchesRequest())
    assert not listed.matches  # nothing half-made is left behind

    log_dir.unlink()
    info = await play_sample_match(server, organiser, "big-two", 1, "logged-again")
    assert info.status == common.MATCH_STATUS_FINISHED
    assert verify_log(server.matches.log_path(info.match_id)).ok


async def test_a_finished_match_is_watched_from_its_log(server, organiser):
    import grpc

    from referee.match.observer import for_spectator
    from referee.protocol import spectator_service, spectator_service_grpc

    info = await play_sample_match(server, organiser, "big-two", 2, "watch-after")
    path = server.matches.log_path(info.match_id)
    logged = [
        (ln.entry.seq, for_spectator(ln.entry.event))
        for ln in read_log(path).lines
        if for_spectator(ln.entry.event) is not None
    ]
    async with grpc.aio.insecure_channel(server.address) as channel:
        watch = spectator_service_grpc.SpectatorServiceStub(channel)
        request = spectator_service.WatchMatchRequest(match_id=info.match_id, from_start=True)
        seen = [(r.seq, r.event) async for r in watch.WatchMatch(request)]
        assert seen == logged and seen[-1][1].HasField("match_ended")
        os.rename(path, path.with_suffix(".moved"))
        with pytest.raises(grpc.aio.AioRpcError) as err:
            _ = [r async for r in watch.WatchMatch(request)]
        assert err.value.code() == grpc.StatusCode.DATA_LOSS
        assert "cannot read the match log" in (err.value.details() or "")


async def test_a_server_keeps_the_last_finished_matches_and_serves_older_logs(tmp_path):
    import grpc

    from referee.protocol import match_service_grpc

    server = RefereeServer("127.0.0.1:0", tmp_path / "logs", keep_finished=2)
    await server.start()
    try:
        async with server.organiser_channel() as channel:
            organiser = match_service_grpc.MatchServiceStub(channel)
            played = [
                await play_sample_match(server, organiser, "big-two", 1, f"keep-{i}")
                for i in range(3)
            ]
            await asyncio.sleep(0)  # the registry hears of the last end
            listed = await organiser.ListMatches(match_service.ListMatchesRequest())
            assert {m.match_id for m in listed.matches} == {m.match_id for m in played[1:]}
            oldest = played[0]
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await organiser.GetMatch(match_service.GetMatchRequest(match_id=oldest.match_id))
            assert err.value.code() == grpc.StatusCode.NOT_FOUND
            assert "no longer held in memory" in (err.value.details() or "")
            assert "GetMatchLog serves its log" in (err.value.details() or "")
            request = match_service.GetMatchLogRequest(match_id=oldest.match_id)
            lines = [r.line async for r in organiser.GetMatchLog(request)]
            # The whole file: every entry and the signature trailer after them.
            path = Path(server.matches.log_path(oldest.match_id))
            assert lines == (await asyncio.to_thread(path.read_text, encoding="utf-8")).splitlines()
            assert len(lines) == len(read_log(path).lines) + 1
            for strange in ("../" * 6 + "etc/passwd", "nope"):
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    _ = [
                        r
                        async for r in organiser.GetMatchLog(
                            match_service.GetMatchLogRequest(match_id=strange)
                        )
                    ]
                assert err.value.code() == grpc.StatusCode.NOT_FOUND
                assert err.value.details() == f"no match {strange!r}"
    finally:
        await server.stop(grace=0.5)
