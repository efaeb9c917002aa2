"""Every rejection reason, provoked by a real client over gRPC, and logged."""

from __future__ import annotations

from pathlib import Path

from referee.log import read_log
from referee.log.verify import verify_log
from referee.protocol import common, play_service
from referee.rules import PASS, Action, MatchState, Rules, deal, format_cards, parse_cards
from referee.rules.cards import card_text, iter_cards

from .conftest import Seat, create, lowest_policy, play_action, seat_all

R = common


async def attempt(seat: Seat, turn_id: int, cards: list[str] | None) -> play_service.ActionResult:
    n = len(seat.messages("result"))
    seat.send(play_action(turn_id, cards))
    return await seat.wait_kind("result", after=n)


def texts(mask: int) -> list[str]:
    return [card_text(c) for c in iter_cards(mask)]


async def test_every_reason_on_the_opening_lead(server, organiser):
    seed = "reasons"
    created = await create(organiser, seed=seed, fault_policy={"max_rejections_per_turn": 20})
    hands = deal(seed, 1)
    leader = next(s for s in range(4) if hands[s] & (1 << 3))  # 3D, the big-two opening card
    policies = [lowest_policy] * 4
    policies[leader] = None
    seats = seat_all(server, created, policies)
    me = seats[leader]
    prompt = await me.wait_kind("prompt")
    assert prompt.is_lead and prompt.state.must_include == "3D" and not prompt.can_pass
    own = texts(hands[leader])
    other = texts(hands[(leader + 1) % 4])[0]
    not_three = next(c for c in own if c != "3D")
    distinct_ranks = ["3D", next(c for c in own if c[0] != "3")]
    cases = [
        (["1X"], R.REJECTION_REASON_UNPARSEABLE_CARD),
        (["3D", "3d"], R.REJECTION_REASON_DUPLICATE_CARD),
        ([other], R.REJECTION_REASON_CARD_NOT_IN_HAND),
        (distinct_ranks, R.REJECTION_REASON_NOT_A_COMBINATION),
        ([not_three], R.REJECTION_REASON_MISSING_OPENING_CARD),
        (None, R.REJECTION_REASON_PASS_ON_LEAD),
    ]
    for cards, reason in cases:
        res = await attempt(me, prompt.turn_id, cards)
        assert not res.accepted and res.reason == reason, (cards, res)
        assert res.message
    # An empty play, an action with neither play nor pass, and a stale turn id.
    empty = play_service.Action(turn_id=prompt.turn_id)
    empty.play.SetInParent()
    n = len(me.messages("result"))
    me.send(play_service.PlayRequest(action=empty))
    assert (await me.wait_kind("result", after=n)).reason == R.REJECTION_REASON_EMPTY_PLAY
    me.send(play_service.PlayRequest(action=play_service.Action(turn_id=prompt.turn_id)))
    assert (await me.wait_kind("result", after=n + 1)).reason == R.REJECTION_REASON_MALFORMED_ACTION
    res = await attempt(me, prompt.turn_id + 100, ["3D"])
    assert res.reason == R.REJECTION_REASON_STALE_TURN
    # Another seat acting now is told it is not its turn.
    bystander = seats[(leader + 2) % 4]
    res = await attempt(bystander, prompt.turn_id, ["3D"])
    assert res.reason == R.REJECTION_REASON_NOT_YOUR_TURN
    # Retrying until legal works: the same turn accepts a legal play.
    res = await attempt(me, prompt.turn_id, ["3D"])
    assert res.accepted
    me.policy = lowest_policy
    for s in seats:
        await s.finish()
    info_path = Path(server.matches.log_path(created.match_id))
    report = verify_log(info_path)
    assert report.ok, report.summary()
    logged = [
        ln.entry.event.action_rejected.reason
        for ln in read_log(info_path).lines
        if ln.entry.event.HasField("action_rejected")
    ]
    for _, reason in cases:
        assert reason in logged


async def test_wrong_count_and_not_beating_on_a_response(server, organiser):
    # Find a seed where the second seat to act holds a pair (engine-side look-up).
    for i in range(200):
        seed = f"respond-{i}"
        hands = deal(seed, 1)
        leader = next(s for s in range(4) if hands[s] & (1 << 3))
        nxt = (leader + 3) % 4  # counterclockwise
        ranks = [c >> 2 for c in iter_cards(hands[nxt])]
        pair_rank = next((r for r in set(ranks) if ranks.count(r) >= 2), None)
        if pair_rank is not None:
            break
    else:  # pragma: no cover
        raise AssertionError("no suitable seed")
    created = await create(organiser, seed=seed)
    lead = ["3D"]

    def leader_policy(seat: Seat, prompt: play_service.TurnPrompt) -> list[str] | None:
        if prompt.is_lead and prompt.state.must_include:
            return lead
        return lowest_policy(seat, prompt)

    policies = [lowest_policy] * 4
    policies[leader] = leader_policy
    policies[nxt] = None
    seats = seat_all(server, created, policies)
    me = seats[nxt]
    prompt = await me.wait_kind("prompt")
    assert list(prompt.state.table.cards) == ["3D"]
    pair = [card_text(c) for c in iter_cards(hands[nxt]) if c >> 2 == pair_rank][:2]
    res = await attempt(me, prompt.turn_id, pair)
    assert res.reason == R.REJECTION_REASON_WRONG_CARD_COUNT
    assert res.attempts_left == 2
    me.policy = lowest_policy
    me.send(play_action(prompt.turn_id, None))
    for s in seats:
        await s.finish()
    assert verify_log(Path(server.matches.log_path(created.match_id))).ok


async def test_does_not_beat(server, organiser):
    seed = "beat"
    hands = deal(seed, 1)
    leader = next(s for s in range(4) if hands[s] & (1 << 3))
    nxt = (leader + 3) % 4
    # The leader opens with 3D; the next seat plays its lowest single; the one after
    # answers with 3-something lower than that.
    created = await create(organiser, seed=seed)
    third = (leader + 2) % 4
    policies = [lowest_policy] * 4

    def respond_low(seat: Seat, prompt: play_service.TurnPrompt) -> list[str] | None:
        return list(prompt.legal_plays[0].cards) if prompt.legal_plays else None

    policies[leader] = respond_low
    policies[nxt] = respond_low
    policies[third] = None
    seats = seat_all(server, created, policies)
    me = seats[third]
    prompt = await me.wait_kind("prompt")
    table = parse_cards(list(prompt.state.table.cards))
    assert table.bit_count() == 1
    ctx_rules = Rules.for_profile("big-two")
    from referee.rules import context_for

    ctx = context_for(ctx_rules)
    weaker = [
        c
        for c in iter_cards(hands[third])
        if ctx.single_key[c] < ctx.single_key[table.bit_length() - 1]
    ]
    assert weaker, "the seed gives the third seat no weaker single"
    res = await attempt(me, prompt.turn_id, [card_text(weaker[0])])
    assert res.reason == R.REJECTION_REASON_DOES_NOT_BEAT
    me.policy = lowest_policy
    me.send(play_action(prompt.turn_id, None))
    for s in seats:
        await s.finish()
    assert verify_log(Path(server.matches.log_path(created.match_id))).ok


async def test_locked_out_after_a_pass(server, organiser):
    seed = "locked"
    created = await create(organiser, profile="pusoy-dos-chips", seed=seed)
    hands = deal(seed, 1)
    leader = next(s for s in range(4) if hands[s] & 1)  # 3C opens pusoy-dos-chips
    nxt = (leader + 3) % 4  # counterclockwise
    policies = [lowest_policy] * 4
    policies[nxt] = None
    seats = seat_all(server, created, policies)
    me = seats[nxt]
    prompt = await me.wait_kind("prompt")
    assert (await attempt(me, prompt.turn_id, None)).accepted
    res = await attempt(me, prompt.turn_id + 1, texts(hands[nxt])[:1])
    assert res.reason == R.REJECTION_REASON_LOCKED_OUT, res
    me.policy = lowest_policy
    for s in seats:
        await s.finish()
    assert verify_log(Path(server.matches.log_path(created.match_id))).ok


def _simulate_lone_two(seed: str) -> int | None:
    """Engine-side dry run of the lone-2 scenario; the target seat, or None."""
    rules = Rules.for_profile("big-two", {"no_finish_on_lone_two": True})
    m = MatchState(rules)
    hands = deal(seed, 1)
    targets = [s for s in range(4) if (hands[s] >> 48 & 0xF).bit_count() == 1]
    if not targets:
        return None
    target = targets[0]
    hand = m.start_hand(hands)
    while not hand.is_over:
        seat = hand.turn
        assert seat is not None
        choice = _lone_two_choice(
            seat == target,
            format_cards(hand.hands[seat]).split(),
            [format_cards(x).split() for x in hand.legal_plays().masks],
            hand.table is None,
        )
        if (
            seat == target
            and choice is not None
            and len(choice) == 1
            and hand.hands[seat].bit_count() == 1
            and choice[0][0] == "2"
        ):
            return target
        action = PASS if choice is None else Action(parse_cards(choice))
        if hand.check(seat, action) is not None:
            action = PASS
        m.apply(seat, action)
    return None


def _lone_two_choice(
    is_target: bool, hand: list[str], legal: list[list[str]], lead: bool
) -> list[str] | None:
    if is_target:
        if lead and len(hand) == 1:
            return hand  # the lone 2: rejected, then a pass
        singles = [p for p in legal if len(p) == 1 and p[0][0] != "2"]
        if singles:
            return singles[0]
        return legal[0] if lead and legal else None
    if lead:
        return legal[0] if legal else None
    return None


async def test_lone_two_finish_is_rejected_then_the_forced_pass_accepted(server, organiser):
    seed = next(f"lone-{i}" for i in range(500) if _simulate_lone_two(f"lone-{i}") is not None)
    target = _simulate_lone_two(seed)
    created = await create(organiser, seed=seed, options={"no_finish_on_lone_two": "true"})
    rejected: list[play_service.ActionResult] = []

    def policy_for(seat_no: int):
        def policy(seat: Seat, prompt: play_service.TurnPrompt) -> list[str] | None:
            legal = [list(p.cards) for p in prompt.legal_plays]
            return _lone_two_choice(seat_no == target, list(prompt.hand), legal, prompt.is_lead)

        return policy

    seats = [Seat(server.address, t, policy_for(i)) for i, t in enumerate(created.seat_tokens)]
    for s in seats:
        s.start()
    me = seats[target]
    res = await me.wait_for(
        lambda m: m.WhichOneof("kind") == "result" and not m.result.accepted, timeout=20
    )
    rejected.append(res.result)
    assert res.result.reason == R.REJECTION_REASON_LONE_TWO_FINISH
    prompt = me.messages("prompt")[-1]
    assert prompt.can_pass and not prompt.legal_plays and prompt.is_lead
    me.send(play_action(prompt.turn_id, None))
    for s in seats:
        await s.finish()
    path = Path(server.matches.log_path(created.match_id))
    assert verify_log(path).ok
    forced = [
        ln.entry.event.passed
        for ln in read_log(path).lines
        if ln.entry.event.HasField("passed") and ln.entry.event.passed.forced_lead_pass
    ]
    assert forced and forced[0].seat == target


async def test_a_play_too_large_to_be_one_is_malformed_and_not_logged_whole(server, organiser):
    seed = "oversized"
    created = await create(organiser, seed=seed, fault_policy={"max_rejections_per_turn": 5})
    hands = deal(seed, 1)
    leader = next(s for s in range(4) if hands[s] & (1 << 3))
    policies = [lowest_policy] * 4
    policies[leader] = None
    seats = seat_all(server, created, policies)
    me = seats[leader]
    prompt = await me.wait_kind("prompt")
    # 40 KB in one card string: under the server's message limit (64 KiB), so the play
    # itself reaches the match (a larger message is refused by the transport).
    huge_card = "3D" * 20_000
    fourteen = [card_text(c) for c in range(14)]
    for cards in ([huge_card], fourteen, ["3D", huge_card]):
        res = await attempt(me, prompt.turn_id, cards)
        assert res.reason == R.REJECTION_REASON_MALFORMED_ACTION
        assert "at most 13 cards" in res.message and len(res.message) < 200
    # A bystander's oversized play out of turn is not logged whole either.
    bystander = seats[(leader + 1) % 4]
    res = await attempt(bystander, prompt.turn_id, [huge_card])
    assert res.reason == R.REJECTION_REASON_NOT_YOUR_TURN
    assert (await attempt(me, prompt.turn_id, ["3D"])).accepted
    me.policy = lowest_policy
    for s in seats:
        await s.finish()
    path = Path(server.matches.log_path(created.match_id))
    lines = read_log(path).lines
    rejected = [
        ln.entry.event.action_rejected
        for ln in lines
        if ln.entry.event.WhichOneof("kind") == "action_rejected"
    ]
    assert len(rejected) == 4 and all(not r.cards for r in rejected)
    assert sum(len(ln.raw) for ln in lines) < 200_000
    assert verify_log(path).ok
