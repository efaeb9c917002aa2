"""The store on SQLite and PostgreSQL: teams and keys, uploads within limits, versions'
states, the queue's claim, lease and record, and the ratings of deal groups."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from referee_cli import run_referee
from sqlalchemy import select, text

from referee.ladder.errors import (
    Conflict,
    KeyRefused,
    LadderError,
    LeaseLost,
    ManifestError,
    NotFound,
    QuotaExceeded,
)
from referee.ladder.storage import queries
from referee.ladder.storage.keys import parse_key
from referee.ladder.storage.records import (
    GroupPurpose,
    LadderMatchState,
    MatchOutcome,
    SeatRecord,
    TeamLimits,
    VersionState,
)
from referee.ladder.storage.schema import matches, ratings, seat_results
from referee.log.summary import summarize_log
from referee.tournament.results import SeatResult

from .helpers import active_version, failed, finished, upload_version

ROTATIONS = [(0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)]


@pytest.fixture
def four(store):
    """Four active versions of four teams."""
    for team in "abcd":
        store.create_team(team)
    return [active_version(store, team, "bot").id for team in "abcd"]


# -- teams and keys ---------------------------------------------------------------------


def test_a_key_is_shown_once_and_kept_only_as_a_hash(store):
    new = store.create_team("alpha")
    assert new.key.startswith(f"pdl_{new.team.key_id}_")
    assert "key=" not in repr(new)  # never printed by accident
    assert store.team_by_key(new.key) == new.team
    secret = parse_key(new.key)[1]
    with store.reading() as conn:
        dump = [tuple(map(str, r)) for r in conn.execute(text("SELECT * FROM teams")).all()]
    assert not any(secret in value for row in dump for value in row)
    assert any(value.startswith("sha256$") for row in dump for value in row)


def test_keys_that_are_not_the_teams_are_refused(store):
    alpha = store.create_team("alpha").key
    beta = store.create_team("beta").key
    key_id = parse_key(alpha)[0]
    forged = [
        alpha[:-1] + ("A" if alpha[-1] != "A" else "B"),  # the last character changed
        f"pdl_{key_id}_{parse_key(beta)[1]}",  # alpha's id, beta's secret
        f"pdl_{'0' * 16}_{parse_key(alpha)[1]}",  # no such id
        alpha + "x",
        "",
        "pdl_" + "a" * 10_000,
    ]
    for key in forged:
        with pytest.raises(KeyRefused):
            store.team_by_key(key)
    assert store.team_by_key(beta).name == "beta"


def test_a_rotated_key_replaces_the_old_one_at_once(store):
    old = store.create_team("alpha").key
    new = store.rotate_key("alpha").key
    with pytest.raises(KeyRefused):
        store.team_by_key(old)
    assert store.team_by_key(new).name == "alpha"


def test_team_names_are_checked(store):
    for name in ["", "A", "-x", "a b", "a/b", "x" * 41, "house", "caf\u00e9"]:
        with pytest.raises(LadderError):
            store.create_team(name)


def test_a_team_name_is_taken_once(store):
    store.create_team("alpha")
    with pytest.raises(Conflict, match="already"):
        store.create_team("alpha")


# -- uploads and versions ---------------------------------------------------------------


def test_versions_of_a_bot_are_numbered_and_start_pending(store):
    store.create_team("alpha")
    v1 = upload_version(store, "alpha", "bot")
    v2 = upload_version(store, "alpha", "bot")
    other = upload_version(store, "alpha", "other")
    assert (v1.number, v2.number, other.number) == (1, 2, 1)
    assert v1.state is VersionState.PENDING and v1.label == "alpha/bot#1"
    assert v1.manifest.command == ("bot.py",)


def test_uploads_per_hour_count_refused_ones_too(store, clock):
    store.create_team("alpha")
    limits = TeamLimits(uploads_per_hour=3)
    first = store.reserve_upload("alpha", 10, limits)
    store.refuse_upload(first, "not an archive")
    clock.advance(600)
    upload_version(store, "alpha", "bot", limits=limits)
    upload_version(store, "alpha", "bot", limits=limits)
    with pytest.raises(QuotaExceeded, match=r"3 uploads in the last hour; wait 3000 s"):
        store.reserve_upload("alpha", 10, limits)
    clock.advance(3001)  # the refused one is over an hour old
    store.reserve_upload("alpha", 10, limits)


def test_disk_per_team_counts_kept_files_only(store):
    store.create_team("alpha")
    store.create_team("beta")
    limits = TeamLimits(disk_bytes=10_000)
    v1 = upload_version(
        store, "alpha", "bot", archive_bytes=2000, unpacked_bytes=5000, limits=limits
    )
    assert store.disk_used("alpha") == 7000
    with pytest.raises(QuotaExceeded, match="7000 bytes of its 10000"):
        store.reserve_upload("alpha", 3001, limits)
    upload = store.reserve_upload("alpha", 1000, limits)  # fits, until it is unpacked
    with pytest.raises(QuotaExceeded, match="12000 bytes"):
        store.add_version(
            upload, "bot", archive_sha256="f" * 64, archive_format="zip", archive_bytes=1000,
            unpacked_bytes=4000, files=1, manifest_json=v1.manifest.to_json(), runtime="python",
            limits=limits,
        )  # fmt: skip
    upload_version(store, "beta", "bot", archive_bytes=2000, unpacked_bytes=5000, limits=limits)
    store.reject(v1.id, "crashed")
    store.files_removed(v1.id)
    assert store.disk_used("alpha") == 0
    assert store.version(v1.id).files_removed_at is not None


def test_old_versions_files_can_go_their_history_stays(store, clock):
    store.create_team("alpha")
    made = []
    for _ in range(4):
        clock.advance(1)
        made.append(store.activate(upload_version(store, "alpha", "bot").id))
    clock.advance(1)
    store.reject(upload_version(store, "alpha", "bot").id, "crashed")
    # versions 1..3 retired (each by the next), 4 active, 5 rejected: keep the 2 newest
    prune = store.versions_to_prune("alpha", keep=2)
    assert [v.number for v in prune] == [2, 1]
    for v in prune:
        store.files_removed(v.id)
    assert store.versions_to_prune("alpha", keep=2) == []
    assert store.disk_used("alpha") == 3 * 5000
    with pytest.raises(Conflict, match="in use"):
        store.files_removed(made[-1].id)


def test_activating_a_version_retires_the_bots_last_one(store, four):
    clock_before = store.version(four[0])
    v2 = upload_version(store, "a", "bot")
    store.activate(v2.id)
    old = store.version(four[0])
    assert old.state is VersionState.RETIRED and old.reason == "replaced by version 2"
    assert old.state_at >= clock_before.state_at
    assert store.version(v2.id).state is VersionState.ACTIVE


def test_a_rejected_version_keeps_its_reason_and_stderr(store):
    store.create_team("alpha")
    v = upload_version(store, "alpha", "bot")
    tail = "Traceback...\n" + "x" * 10_000 + "\nImportError: no module named numpy"
    got = store.reject(v.id, "exited with status 1 before its first turn", tail)
    assert got.state is VersionState.REJECTED
    assert got.reason.startswith("exited with status 1")
    assert got.stderr_tail.endswith("no module named numpy") and len(got.stderr_tail) == 8000


@pytest.mark.parametrize(
    ("steps", "bad"),
    [
        ((), "retire"),  # pending -> retired
        (("reject",), "activate"),
        (("activate", "retire"), "activate"),
        (("activate", "retire"), "retire"),
        (("activate",), "reject"),
    ],
)
def test_versions_never_move_backwards(store, steps, bad):
    store.create_team("alpha")
    v = upload_version(store, "alpha", "bot")
    do = {
        "activate": lambda: store.activate(v.id),
        "reject": lambda: store.reject(v.id, "no"),
        "retire": lambda: store.retire(v.id, "asked"),
    }
    for step in steps:
        do[step]()
    before = store.version(v.id)
    with pytest.raises(Conflict):
        do[bad]()
    assert store.version(v.id) == before


def test_house_bots_are_active_versions_made_once(store):
    greedy = store.builtin_version("greedy")
    assert store.builtin_version("greedy") == greedy
    assert (greedy.team, greedy.runtime, greedy.state) == ("house", "builtin", "active")
    assert greedy.archive_sha256 is None
    with pytest.raises(ManifestError, match="no command line"):
        greedy.manifest.argv(Path("."))
    with pytest.raises(Conflict):
        store.reserve_upload("house", 10, TeamLimits())
    with pytest.raises(Conflict):
        store.rotate_key("house")


# -- scheduling -------------------------------------------------------------------------


def test_a_ranked_table_seats_four_active_versions(store, four):
    store.create_team("e")
    pending = upload_version(store, "e", "bot")
    with pytest.raises(LadderError, match="four different"):
        store.queue.schedule([four[0], four[0], four[1], four[2]], ROTATIONS)
    with pytest.raises(Conflict, match="pending"):
        store.queue.schedule([pending.id, *four[1:]], ROTATIONS)
    with pytest.raises(NotFound):
        store.queue.schedule([999, *four[1:]], ROTATIONS)
    with pytest.raises(LadderError, match="seatings"):
        store.queue.schedule(four, [(0, 1, 2, 2)])
    greedy = store.builtin_version("greedy").id
    ids = store.queue.schedule([pending.id, greedy, greedy, greedy], [(0, 1, 2, 3)], "validation")
    assert len(ids) == 1


def test_a_group_seats_its_versions_by_rotation_with_one_seed(store, four):
    ids = store.queue.schedule(four, ROTATIONS)
    claims = [store.queue.claim("w", 60) for _ in ids]
    assert [c.match_id for c in claims] == ids
    assert [c.version_ids for c in claims] == [tuple(four[i] for i in s) for s in ROTATIONS]
    assert len({c.seed for c in claims}) == 1 and len(claims[0].seed) == 64
    assert len({c.group_id for c in claims}) == 1


# -- the queue: claim, lease, record ----------------------------------------------------


def test_validation_goes_first_then_the_oldest(store, four, clock):
    first = store.queue.schedule(four, ROTATIONS[:1])
    clock.advance(1)
    second = store.queue.schedule(four, ROTATIONS[:1])
    store.create_team("e")
    pending = upload_version(store, "e", "bot").id
    greedy = store.builtin_version("greedy").id
    clock.advance(1)
    check = store.queue.schedule([pending, greedy, greedy, greedy], [(0, 1, 2, 3)], "validation")
    order = [queries.queue(store)[i].match_id for i in range(3)]
    assert order == check + first + second
    claimed = [store.queue.claim("w", 60).match_id for _ in range(3)]
    assert claimed == order
    assert store.queue.claim("w", 60) is None


def test_a_killed_workers_match_is_played_again_and_recorded_once(store, four, clock):
    (match_id,) = store.queue.schedule(four, ROTATIONS[:1])
    lost = store.queue.claim("worker-1", 30)
    clock.advance(10)
    assert store.queue.renew(match_id, lost.token, 30) == clock.now + 30
    assert store.queue.claim("worker-2", 30) is None  # still leased
    clock.advance(31)  # worker-1 died: no renewal
    again = store.queue.claim("worker-2", 30)
    assert (again.match_id, again.attempt, again.seed) == (match_id, 2, lost.seed)
    with pytest.raises(LeaseLost):
        store.queue.renew(match_id, lost.token, 30)
    with pytest.raises(LeaseLost):
        store.queue.record(match_id, lost.token, finished(match_id=match_id))
    done = store.queue.record(match_id, again.token, finished(match_id=match_id))
    assert (done.state, done.already, done.group_rated) == (LadderMatchState.FINISHED, False, True)
    # The first worker was only slow, and records after the second: still not its match.
    with pytest.raises(LeaseLost):
        store.queue.record(match_id, lost.token, finished(match_id=match_id))
    assert store.queue.record(match_id, again.token, finished(match_id=match_id)).already
    assert queries.check(store) == []
    assert store.version(four[0]).matches == 1


def test_recording_twice_changes_nothing(store, four):
    ids = store.queue.schedule(four, ROTATIONS[:2])
    claims = [store.queue.claim("w", 60) for _ in ids]
    store.queue.record(ids[0], claims[0].token, finished(match_id=ids[0]))
    store.queue.record(ids[1], claims[1].token, finished((2, 1, 4, 3), match_id=ids[1]))
    before = [store.version(v) for v in four]
    with store.reading() as conn:
        history = conn.execute(select(ratings).order_by(ratings.c.version_id)).all()
    for claim in claims:  # the same worker again, as after a crash just past the commit
        again = store.queue.record(claim.match_id, claim.token, finished((4, 3, 2, 1)))
        assert again.already and again.state is LadderMatchState.FINISHED and not again.group_rated
    assert [store.version(v) for v in four] == before
    with store.reading() as conn:
        assert conn.execute(select(ratings).order_by(ratings.c.version_id)).all() == history
    assert len(history) == 4 and queries.check(store) == []


def test_a_group_is_rated_once_when_its_last_match_is_recorded(store, four):
    ids = store.queue.schedule(four, ROTATIONS)
    initial = store.version(four[0]).rating
    for i, match_id in enumerate(ids):
        claim = store.queue.claim("w", 60)
        # four[0] comes first in every seating: its seat is where its place goes
        places = [0, 0, 0, 0]
        for seat, place_of in enumerate(ROTATIONS[i]):
            places[seat] = place_of + 1
        done = store.queue.record(match_id, claim.token, finished(tuple(places), match_id=match_id))
        assert done.group_rated == (i == len(ids) - 1)
        if i < len(ids) - 1:
            assert store.version(four[0]).rating == initial
    after = [store.version(v) for v in four]
    assert after[0].rating.mu > initial.mu > after[3].rating.mu  # a always first, d last
    assert all(v.sigma < initial.sigma for v in (a.rating for a in after))
    assert [v.rated_groups for v in after] == [1, 1, 1, 1]
    assert [v.matches for v in after] == [4, 4, 4, 4]
    history = queries.rating_history(store, four[0])
    assert [(p.mu, p.sigma) for p in history] == [(after[0].rating.mu, after[0].rating.sigma)]
    board = queries.leaderboard(store)
    assert [r.version_id for r in board] == four
    assert board[0].low < board[0].mu < board[0].high and board[0].matches == 4


def test_failed_matches_are_counted_not_rated(store, four):
    ids = store.queue.schedule(four, ROTATIONS[:2])
    c1, c2 = store.queue.claim("w", 60), store.queue.claim("w", 60)
    store.queue.record(ids[0], c1.token, failed("start", "seat 2: exec format error"))
    done = store.queue.record(ids[1], c2.token, finished(match_id=ids[1]))
    assert done.group_rated  # rated on its one finished match
    v = store.version(four[0])
    assert (v.matches, v.failed_matches, v.rated_groups) == (1, 1, 1)
    figures = queries.figures(store)
    assert figures.failures == {"start": 1}
    played = queries.recent_matches(store, four[2])
    assert {(m.state, m.failure) for m in played} == {
        (LadderMatchState.FAILED, "start"),
        (LadderMatchState.FINISHED, None),
    }


def test_a_match_that_kills_every_worker_is_given_up(store, four, clock):
    (match_id,) = store.queue.schedule(four, ROTATIONS[:1])
    for attempt in range(1, store.queue.max_attempts + 1):
        claim = store.queue.claim(f"worker-{attempt}", 5)
        assert claim.attempt == attempt
        clock.advance(6)
    assert store.queue.claim("worker-9", 5) is None
    with store.reading() as conn:
        row = conn.execute(select(matches).where(matches.c.id == match_id)).one()
    assert (row.state, row.failure) == (LadderMatchState.FAILED, "abandoned")
    assert "3 times" in row.failure_detail and "worker-3" in row.failure_detail
    assert queries.check(store) == []


def test_a_released_match_goes_back_to_the_queue(store, four):
    (match_id,) = store.queue.schedule(four, ROTATIONS[:1])
    claim = store.queue.claim("w", 60)
    store.queue.release(match_id, claim.token)
    with pytest.raises(LeaseLost):
        store.queue.release(match_id, claim.token)
    again = store.queue.claim("w2", 60)
    assert (again.match_id, again.attempt) == (match_id, 1)


def test_retiring_a_version_cancels_its_queued_matches_not_running_ones(store, four):
    ids = store.queue.schedule(four, ROTATIONS)
    running = store.queue.claim("w", 60)
    store.retire(four[1], "the team asked")
    state = {q.match_id: q.state for q in queries.queue(store)}
    assert state == {running.match_id: LadderMatchState.RUNNING}
    store.queue.record(running.match_id, running.token, finished(match_id=running.match_id))
    assert queries.figures(store).failures == {"retired": 3}
    assert queries.check(store) == []
    assert store.version(four[1]).matches == 1  # its history stays
    assert len(ids) == 4


IMPOSSIBLE = [
    MatchOutcome(True, finished().seats[:3], log_path="x", log_hash="0" * 64),
    MatchOutcome(True, finished().seats, log_path=None, log_hash=None),
    MatchOutcome(True, finished().seats, log_path="x", log_hash="short"),
    MatchOutcome(
        True, (*finished().seats[:3], SeatRecord(2, 1, 0)), log_path="x", log_hash="0" * 64
    ),
    MatchOutcome(
        True, (*finished().seats[:3], SeatRecord(3, 9, 0)), log_path="x", log_hash="0" * 64
    ),
    MatchOutcome(
        True, (*finished().seats[:3], SeatRecord(4, 1, 0)), log_path="x", log_hash="0" * 64
    ),
    MatchOutcome(False),
    MatchOutcome(False, failure="x" * 41),
    MatchOutcome(True, finished().seats, log_path="x", log_hash="0" * 64, failure="start"),
]


def test_an_impossible_outcome_is_refused_and_nothing_is_written(store, four):
    (match_id,) = store.queue.schedule(four, ROTATIONS[:1])
    claim = store.queue.claim("w", 60)
    for outcome in IMPOSSIBLE:
        with pytest.raises(LadderError):
            store.queue.record(match_id, claim.token, outcome)
        assert queries.queue(store)[0].state is LadderMatchState.RUNNING
    store.queue.record(match_id, claim.token, finished(match_id=match_id))
    assert queries.check(store) == []


def test_unknown_matches_and_groups_are_typed_errors(store):
    with pytest.raises(NotFound):
        store.queue.record("L0000001-abcdef-0", "token", finished())
    with pytest.raises(LeaseLost):
        store.queue.renew("L0000001-abcdef-0", "token", 10)
    with pytest.raises(NotFound):
        store.version(12345)
    assert queries.queue(store) == [] and store.queue.claim("w", 10) is None
    assert GroupPurpose("ranked") is GroupPurpose.RANKED


# -- a real match, as a worker will record it ------------------------------------------


@pytest.fixture(scope="module")
def played_log(tmp_path_factory):
    """A real match's signed log: ``referee match`` with its built-in bots."""
    folder = tmp_path_factory.mktemp("match")
    done = run_referee(
        "match", "--hands", "2", "--seed", "ladder", "--log-dir", str(folder / "logs"),
        "--state-dir", str(folder / "state"), cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (log,) = (folder / "logs").glob("*.jsonl")
    return log


def test_a_real_matchs_summary_is_recorded_seat_by_seat(store, four, played_log):
    summary = summarize_log(played_log)
    (match_id,) = store.queue.schedule(four, ROTATIONS[:1])
    claim = store.queue.claim("w", 60)
    outcome = MatchOutcome(
        finished=True,
        seats=tuple(
            SeatRecord.of(SeatResult(name, seat))
            for name, seat in zip(summary.seat_names, summary.seats, strict=True)
        ),
        log_path=f"logs/{played_log.name}",
        log_hash=summary.final_hash,
        log_signed_by=summary.signed_by,
        hands=summary.hands,
    )
    assert store.queue.record(match_id, claim.token, outcome).state is LadderMatchState.FINISHED
    with store.reading() as conn:
        row = conn.execute(select(matches).where(matches.c.id == match_id)).one()
        stored = conn.execute(select(seat_results).order_by(seat_results.c.seat)).all()
    assert (row.log_hash, row.log_signed_by, row.hands) == (
        summary.final_hash,
        summary.signed_by,
        2,
    )
    assert len(row.log_signed_by) == 44  # a base64 Ed25519 key
    assert [(r.place, r.total, json.loads(r.scores)) for r in stored] == [
        (s.place, s.total, list(s.scores)) for s in summary.seats
    ]
    assert sorted(r.place for r in stored) == [1, 2, 3, 4]
    assert queries.check(store) == []
