"""Ratings per deal group, statistics with confidence intervals, order independence."""

from __future__ import annotations

import dataclasses
import io
import math
import random

from referee.rules import Scoring
from referee.tournament.ratings import Standings, group_scores, replay
from referee.tournament.results import (
    STATUS_FAILED,
    STATUS_FINISHED,
    MatchResult,
    SeatResult,
    SeatSummary,
)
from referee.tournament.stats import los, mean_ci95, overlaps, paired, rating_interval, t_quantile


def result(
    index: int,
    group: int,
    bots: list[str],
    totals: list[int],
    *,
    status: str = STATUS_FINISHED,
    **faults: int,
) -> MatchResult:
    order = sorted(range(4), key=lambda s: totals[s])
    places = [0] * 4
    for rank, seat in enumerate(order):
        places[seat] = (
            rank + 1
            if rank == 0 or totals[seat] != totals[order[rank - 1]]
            else places[order[rank - 1]]
        )
    seats = tuple(
        SeatResult(
            bots[s],
            SeatSummary(
                seat=s,
                place=places[s],
                total=totals[s],
                scores=(totals[s],),
                **({k: v for k, v in faults.items()} if s == 0 else {}),
            ),
        )
        for s in range(4)
    )
    return MatchResult(
        f"m{index}", index, group, 0, 0, 0, "seed", status, "", "", "", 1, None, "", 0.0, seats
    )


def test_student_t_and_interval():
    # Against the printed table of Student's t (two-sided 95%).
    for df, printed in [(1, 12.706), (2, 4.303), (10, 2.228), (30, 2.042), (120, 1.980)]:
        assert round(t_quantile(df), 3) == printed
    mean, _, high = mean_ci95(3, 6, 14)  # 1, 2, 3
    assert mean == 2.0 and math.isclose(high - mean, 4.303 * 1 / math.sqrt(3), abs_tol=1e-3)
    assert mean_ci95(1, 5, 25)[1] == -math.inf
    assert math.isnan(mean_ci95(0, 0, 0)[0])


def test_paired_differences_by_hand():
    # d = 2, 4, 9: mean 5, sd sqrt(13) (squares about the mean 9 + 1 + 16 = 26, / 2),
    # se sqrt(13 / 3) = 2.0817; t(2) = 4.3027, so the half-width is 8.957.
    p = paired([2.0, 4.0, 9.0])
    assert p.n == 3 and p.mean == 5.0
    assert math.isclose(p.sd, math.sqrt(13))
    assert math.isclose(p.ci95_low, 5 - 8.957, abs_tol=1e-3)
    assert math.isclose(p.ci95_high, 5 + 8.957, abs_tol=1e-3)
    # t = 5 / 2.0817 = 2.4019 with 2 df: P(T < 2.4019) = 0.9308 (from the t CDF
    # 1/2 + t / (2 sqrt(2 + t^2)) for 2 degrees of freedom).
    t = 5 / math.sqrt(13 / 3)
    assert math.isclose(p.los, 0.5 + t / (2 * math.sqrt(2 + t * t)), abs_tol=1e-9)
    # One degree of freedom is the Cauchy: P(T < 1) = 3/4.
    assert math.isclose(los(1.0, 1.0, 1), 0.75)
    assert paired([]).n == 0 and math.isnan(paired([1.0]).ci95_low)
    assert paired([1.0, 1.0]).los == 1.0 and paired([-1.0, -1.0]).los == 0.0


def test_rating_intervals_and_overlap_marks():
    low, high = rating_interval(30.0, 5.0)
    assert math.isclose(low, 30 - 9.8, abs_tol=1e-3) and math.isclose(high, 39.8, abs_tol=1e-3)
    assert overlaps([(20, 40), (19, 21), (10, 18.9)]) == [False, True, False]
    # Touching counts as overlapping: nothing separates the two.
    assert overlaps([(5, 6), (4, 5)]) == [False, True]


def test_head_to_head_pairs_bots_on_the_same_deals():
    bots = ["a", "b", "c", "d"]
    # One group, rotations: a's penalty points over the group are 4 + 2 + 0 + 2 = 8 in
    # four one-hand matches; b's 10. Per hand a is 0.5 better than b.
    st = Standings(bots, Scoring.PENALTY, {0: 4, 1: 4, 2: 4})
    rot = [["a", "b", "c", "d"], ["b", "c", "d", "a"], ["c", "d", "a", "b"], ["d", "a", "b", "c"]]
    points = {"a": [4, 2, 0, 2], "b": [1, 3, 3, 3], "c": [5, 5, 5, 5], "d": [6, 6, 6, 6]}
    for i, seating in enumerate(rot):
        st.add(result(i, 0, seating, [points[b][i] for b in seating]))
    assert group_scores([], Scoring.PENALTY) is None
    ab = next(p for p in st.pairwise(bots) if (p.a, p.b) == ("a", "b"))
    assert ab.groups == 1 and ab.mean == 0.5
    assert math.isnan(ab.los)  # one group: no interval, no likelihood yet
    # Two more groups: a ahead by 1.0 point per hand, then behind by 1.0.
    for g, (pa, pb) in [(1, (0, 1)), (2, (3, 2))]:
        for i, seating in enumerate(rot):
            totals = {"a": pa, "b": pb, "c": 9, "d": 9}
            st.add(result(4 * g + i, g, seating, [totals[b] for b in seating]))
    expected = paired([0.5, 1.0, -1.0])
    pairs = {(p.a, p.b): p for p in st.pairwise(["b", "a", "c", "d"])}
    ba = pairs[("b", "a")]  # seen from b: the same numbers, negated
    assert ba.groups == 3
    assert math.isclose(ba.mean, -expected.mean, abs_tol=1e-4)
    assert math.isclose(ba.ci95_low, -expected.ci95_high, abs_tol=1e-4)
    assert math.isclose(ba.los, 1 - expected.los, abs_tol=1e-4)
    # c is 1 point per hand better than d in group 0, level in the other two.
    assert len(pairs) == 6 and pairs[("c", "d")].mean == round(1 / 3, 4)
    # A group with a failed match is left out of head to head.
    st2 = Standings(bots, Scoring.PENALTY, {0: 2})
    st2.add(result(0, 0, bots, [1, 2, 3, 4]))
    st2.add(result(1, 0, bots, [0, 0, 0, 0], status=STATUS_FAILED))
    assert all(p.groups == 0 for p in st2.pairwise())


def test_a_bot_that_always_loses_ranks_last():
    bots = ["a", "b", "c", "d"]
    sizes = {g: 1 for g in range(30)}
    rng = random.Random(1)
    results = []
    for g in range(30):
        seating = bots[:]
        rng.shuffle(seating)
        totals = [100 if b == "d" else rng.randint(0, 20) for b in seating]
        results.append(result(g, g, seating, totals))
    table = replay(bots, Scoring.PENALTY, sizes, results).table()
    assert table[-1].name == "d"
    assert table[-1].wins == 0 and table[-1].avg_place == 4.0
    assert all(r.sigma < 25 / 3 for r in table)
    assert not table[-1].overlaps_above  # 30 straight last places: clearly apart
    assert [r.overlaps_above for r in table[:3]] == [False, True, True]


def test_a_group_is_one_rating_event_ranked_by_summed_places():
    bots = ["a", "b", "c", "d"]
    # Two seatings of one deal group: a wins one, b the other; their places sum to 3
    # each, and b is ahead on points over the group (5 against 10).
    r0 = result(0, 0, ["a", "b", "c", "d"], [1, 5, 10, 20])
    r1 = result(1, 0, ["b", "a", "c", "d"], [0, 9, 10, 20])
    st = Standings(bots, Scoring.PENALTY, {0: 2})
    st.add(r0)
    assert all(st.stats[b].groups == 0 for b in bots)  # not rated until the group is whole
    st.add(r1)
    table = st.table()
    assert [r.name for r in table] == ["b", "a", "c", "d"]
    assert all(st.stats[b].groups == 1 for b in bots)


def test_order_of_arrival_does_not_change_the_final_table():
    bots = ["a", "b", "c", "d", "e"]
    rng = random.Random(7)
    results = []
    for i in range(40):
        table = rng.sample(bots, 4)
        results.append(result(i, i // 4, table, [rng.randint(0, 30) for _ in range(4)]))
    sizes = {g: 4 for g in range(10)}
    shuffled = results[:]
    rng.shuffle(shuffled)
    a = replay(bots, Scoring.PENALTY, sizes, results).table()
    b = replay(bots, Scoring.PENALTY, sizes, shuffled).table()
    assert a == b
    live = Standings(bots, Scoring.PENALTY, sizes)
    for r in shuffled:
        live.add(r)
    assert sorted(x.matches for x in live.table()) == sorted(x.matches for x in a)


def test_faults_and_failed_matches_are_counted_for_their_bot_only():
    bots = ["a", "b", "c", "d"]
    st = Standings(bots, Scoring.PENALTY, {0: 1, 1: 1})
    st.add(result(0, 0, bots, [30, 1, 2, 3], timeouts=4, rejected=2, disconnects=1))
    st.add(result(1, 1, bots, [0, 0, 0, 0], status=STATUS_FAILED))
    rows = {r.name: r for r in st.table()}
    assert (rows["a"].timeouts, rows["a"].rejected, rows["a"].disconnects) == (4, 2, 1)
    assert all(rows[b].timeouts == 0 for b in "bcd")
    assert all(rows[b].matches == 1 and rows[b].failed == 1 for b in bots)
    assert rows["a"].rank == 4


def test_chips_scoring_prefers_high_totals():
    bots = ["a", "b", "c", "d"]
    st = Standings(bots, Scoring.CHIPS, {g: 1 for g in range(10)})
    for g in range(10):
        r = result(g, g, bots, [-30, 10, 10, 10])
        seats = tuple(
            dataclasses.replace(
                s, summary=dataclasses.replace(s.summary, place=4 if s.bot == "a" else 1)
            )
            for s in r.seats
        )
        st.add(dataclasses.replace(r, seats=seats))
    rows = st.table()
    assert rows[-1].name == "a" and rows[-1].score_per_hand == -30


def test_progress_on_a_terminal_and_off_it():
    import io

    from referee.durations import format_duration
    from referee.tournament.progress import Counts, Progress

    assert format_duration(59.6) == "1m00s" and format_duration(3725) == "1h02m05s"
    bots = ["a", "b", "c", "d"]
    st = Standings(bots, Scoring.PENALTY, {0: 1})
    st.add(result(0, 0, bots, [9, 1, 2, 3]))
    counts = Counts(total=10, done=4, failed=1, running=2, done_this_run=4)
    term = io.StringIO()
    p = Progress(term, tty=True, interval=0)
    p.update(counts, st.leader())
    p.message("a note")
    p.close(counts, st.leader())
    text = term.getvalue()
    assert text.startswith("\r4/10 done | 2 running | 1 failed | ")
    assert "/min | ETA " in text.split("\r")[1]
    assert "leader b (mu " in text and "a note\n" in text and text.endswith("\n")
    plain = io.StringIO()
    p = Progress(plain, tty=False)
    p.update(counts, None)  # nothing: no live line off a terminal
    p.match_done("m0 finished", counts, st.leader())
    assert plain.getvalue().startswith("m0 finished [4/10 done | 2 running | 1 failed")
    assert plain.getvalue().count("\n") == 1
    # With a sequential test, its state is on the line and the ETA is an upper bound.
    counts.test = "SPRT LLR +1.20 [-2.94, 2.94] n 5"
    line = Progress(io.StringIO(), tty=True).status(counts, None)
    assert "ETA ≤ " in line and line.endswith("| SPRT LLR +1.20 [-2.94, 2.94] n 5")


def test_no_leader_before_a_deal_group_is_rated():
    from referee.tournament.progress import Counts, Progress

    bots = ["a", "b", "c", "d"]
    st = Standings(bots, Scoring.PENALTY, {0: 2})
    st.add(result(0, 0, bots, [9, 1, 2, 3]))  # half of its deal group
    counts = Counts(total=4, done=1, done_this_run=1)
    assert st.leader() is None
    assert "leader" not in Progress(io.StringIO(), tty=True).status(counts, st.leader())
    st.add(result(1, 0, bots, [9, 1, 2, 3]))
    leader = st.leader()
    assert leader is not None and leader.name == "b"
    assert "leader b (mu " in Progress(io.StringIO(), tty=True).status(counts, leader)
