"""Verify a schema-1 log (written before the referee logged its commands).

Re-runs every event through the rules engine with the match rules of that version: the
hash chain, the deals against the revealed seed, every verdict and score.

Frozen history: this module is the schema-1 rules as they were, kept so that logs written
then still verify. It is not a model for new code and is not refactored with the rest
(it keeps its own re-application of the moves rather than ``referee.log.hands``); a rule
that changes gets a new schema version and verify.py, never an edit here.
"""

from __future__ import annotations

from referee.log.errors import VerifyError
from referee.log.reader import LogLine, LogRead
from referee.log.writer import line_hash
from referee.match.actions import check_action, default_action, parse_action
from referee.protocol import common
from referee.protocol.convert import (
    KIND_TO_PB,
    PB_TO_REASON,
    card_list,
    rules_from_pb,
    standings_pb,
)
from referee.rules import (
    HandResult,
    MatchState,
    OptionsError,
    Reason,
    Rules,
    SuitOrder,
    card_text,
    deal,
    seed_commitment,
)
from referee.rules.errors import RulesError


def check_v1(read: LogRead) -> int:
    """Check a schema-1 log (written before commands were logged) with the rules of its
    day; the number of hands verified. Raises VerifyError at the first bad line."""
    checker = _Checker(read.lines)
    try:
        checker.run()
    except VerifyError:
        raise
    except Exception as exc:  # a crafted field the old rules never expected
        line = read.lines[min(checker.at, len(read.lines) - 1)] if read.lines else None
        number = line.number if line is not None else 1
        raise VerifyError(number, f"a malformed field ({type(exc).__name__}: {exc})") from None
    return checker.hands


def _fail(line: LogLine, message: str) -> VerifyError:
    return VerifyError(line.number, message)


class _Checker:
    def __init__(self, lines: list[LogLine]) -> None:
        self.lines = lines
        self.hands = 0
        self.at = 0
        """Index of the line being checked."""

    def run(self) -> None:
        self.check_chain()
        first = self.lines[0]
        if first.entry.event.WhichOneof("kind") != "match_created":
            raise _fail(first, "the first event must be match_created")
        created = first.entry.event.match_created
        last = self.lines[-1]
        if last.entry.event.WhichOneof("kind") != "match_ended":
            raise VerifyError(last.number + 1, "the log ends before the match ended (incomplete)")
        seed = last.entry.event.match_ended.seed
        if seed_commitment(seed) != created.seed_commitment:
            raise _fail(last, "SHA-256 of the revealed seed does not match the commitment")
        try:
            rules = rules_from_pb(created.config.rules)
        except (OptionsError, ValueError) as exc:
            raise _fail(first, f"the rules cannot be read: {exc}") from None
        policy = created.config.fault_policy
        self._replay(rules, seed, policy.max_rejections_per_turn or 3)
        # 0: a log from before the limit existed; the server records the value in force.
        if policy.max_actions_out_of_turn:
            self.check_out_of_turn_limit(policy.max_actions_out_of_turn)

    def check_chain(self) -> None:
        if not self.lines:
            raise VerifyError(1, "the log is empty")
        match_id = self.lines[0].entry.match_id
        prev = ""
        for i, line in enumerate(self.lines, start=1):
            e = line.entry
            if e.seq != i:
                raise _fail(line, f"sequence number {e.seq}, expected {i}")
            if e.match_id != match_id:
                raise _fail(line, f"match id {e.match_id!r} differs from {match_id!r}")
            if e.prev_hash != prev:
                raise _fail(line, "prev_hash is not the SHA-256 of the previous line")
            if e.schema_version != 1:
                raise _fail(line, f"unknown schema version {e.schema_version}")
            prev = line_hash(line.raw)

    def check_out_of_turn_limit(self, limit: int) -> None:
        """No seat has more than ``limit`` actions out of turn logged between its prompts.

        An out-of-turn rejection is one outside the seat's own prompted turn: it counts no
        attempt, so it is logged without one.
        """
        since_prompt = [0] * 4
        for line in self.lines:
            ev = line.entry.event
            kind = ev.WhichOneof("kind")
            if kind == "turn_started":
                since_prompt[ev.turn_started.seat] = 0
            elif kind == "action_rejected" and not ev.action_rejected.attempt:
                seat = ev.action_rejected.seat
                if not 0 <= seat < 4:
                    raise _fail(line, f"there is no seat {seat}")
                since_prompt[seat] += 1
                if since_prompt[seat] > limit:
                    raise _fail(
                        line,
                        f"seat {seat} sent more than {limit} actions out of turn since its "
                        "last prompt and was not cut off",
                    )

    def _replay(self, rules: Rules, seed: str, max_rejections: int) -> None:
        order = rules.suit_order
        match = MatchState(rules)
        expected: list[tuple[str, object]] = []
        turn_id = 0
        turn_seat: int | None = None
        rejections = 0
        for line in self.lines[1:]:
            self.at = line.number - 1
            ev = line.entry.event
            kind = ev.WhichOneof("kind")
            if expected:
                want, payload = expected.pop(0)
                if kind != want:
                    raise _fail(line, f"expected {want} here, found {kind}")
                if kind == "trick_cleared" and ev.trick_cleared.leader != payload:
                    raise _fail(
                        line, f"the trick was won by seat {payload}, not {ev.trick_cleared.leader}"
                    )
                if kind == "hand_ended":
                    assert isinstance(payload, HandResult)
                    self._check_hand_end(line, ev.hand_ended, payload, order)
                continue
            if kind in ("seat_connected", "seat_disconnected"):
                continue
            if kind == "match_created":
                raise _fail(line, "a second match_created")
            if kind == "hand_dealt":
                hd = ev.hand_dealt
                number = match.hand_number + 1
                if match.over:
                    raise _fail(line, "a hand was dealt after the match ended")
                if hd.hand_number != number:
                    raise _fail(line, f"hand number {hd.hand_number}, expected {number}")
                hands = deal(seed, number)
                for seat, h in enumerate(hands):
                    got = [sc for sc in hd.hands if sc.seat == seat]
                    if len(got) != 1 or list(got[0].cards) != card_list(h, order):
                        raise _fail(line, f"seat {seat}'s cards differ from the deal of the seed")
                try:
                    hand = match.start_hand(hands)
                except (RulesError, ValueError) as exc:
                    raise _fail(line, f"no hand may start here: {exc}") from None
                must = card_text(hand.must_include.bit_length() - 1) if hand.must_include else ""
                if hd.leader != hand.turn or hd.must_include != must:
                    raise _fail(
                        line, f"seat {hand.turn} leads (must include {must or '-'}), not as logged"
                    )
                self.hands += 1
                continue
            if kind == "turn_started":
                ts = ev.turn_started
                current = match.hand
                if current is None or current.is_over or ts.seat != current.turn:
                    raise _fail(line, f"seat {ts.seat} was prompted out of turn")
                if ts.turn_id <= turn_id:
                    raise _fail(line, f"turn id {ts.turn_id} does not increase")
                turn_id, turn_seat, rejections = ts.turn_id, ts.seat, 0
                continue
            if kind == "action_rejected":
                rejections = self._check_rejection(line, match, turn_id, turn_seat, rejections)
                continue
            if kind in ("played", "passed"):
                self._check_action(
                    line, match, turn_id, turn_seat, rejections, max_rejections, expected
                )
                turn_seat = None
                continue
            if kind in ("trick_cleared", "hand_ended"):
                raise _fail(line, f"unexpected {kind}: the rules call for no such event here")
            if kind == "match_ended":
                me = ev.match_ended
                if me.status == common.MATCH_STATUS_FINISHED and not match.over:
                    raise _fail(line, "the match is reported finished before its end")
                if me.status == common.MATCH_STATUS_CANCELLED and match.over:
                    raise _fail(line, "the match is reported cancelled after its end")
                if list(me.totals) != list(match.totals):
                    raise _fail(line, f"totals {list(me.totals)}, expected {match.totals}")
                if list(me.standings) != standings_pb(match.standings()):
                    raise _fail(line, "the standings do not follow from the scores")
                if line is not self.lines[-1]:
                    raise _fail(line, "events after match_ended")
                continue
            raise _fail(line, f"unknown event {kind}")
        if expected:
            raise VerifyError(self.lines[-1].number + 1, f"missing {expected[0][0]} event")

    def _check_rejection(
        self, line: LogLine, match: MatchState, turn_id: int, turn_seat: int | None, rejections: int
    ) -> int:
        rj = line.entry.event.action_rejected
        hand = match.hand
        on_turn = turn_seat is not None and rj.seat == turn_seat and rj.turn_id == turn_id
        reason = PB_TO_REASON.get(rj.reason)
        if rj.reason == common.REJECTION_REASON_STALE_TURN:
            if on_turn:
                raise _fail(line, "a stale-turn rejection of the current turn's action")
            return rejections + (1 if rj.seat == turn_seat else 0)
        if rj.reason == common.REJECTION_REASON_MALFORMED_ACTION:
            if rj.cards or getattr(rj, "pass"):
                raise _fail(line, "an action with cards or a pass was rejected as malformed")
            return rejections + 1
        if reason in (Reason.NOT_YOUR_TURN, Reason.LOCKED_OUT):
            if hand is not None and hand.turn == rj.seat and on_turn:
                raise _fail(line, f"seat {rj.seat} was told it was not its turn on its own turn")
            if reason is Reason.LOCKED_OUT and (hand is None or not hand.locked[rj.seat]):
                raise _fail(line, f"seat {rj.seat} is not locked out")
            return rejections
        if reason is None or not on_turn:
            raise _fail(line, "a rejection that names no turn of this seat")
        cards = None if getattr(rj, "pass") else list(rj.cards)
        _, error = check_action(match, rj.seat, cards)
        if error is None:
            raise _fail(line, f"a legal action was rejected ({reason.value})")
        if error.reason is not reason:
            raise _fail(line, f"rejected as {reason.value}, but the rules say {error.reason.value}")
        return rejections + 1

    def _check_action(
        self,
        line: LogLine,
        match: MatchState,
        turn_id: int,
        turn_seat: int | None,
        rejections: int,
        max_rejections: int,
        expected: list[tuple[str, object]],
    ) -> None:
        ev = line.entry.event
        is_play = ev.WhichOneof("kind") == "played"
        body = ev.played if is_play else ev.passed
        hand = match.hand
        if hand is None or hand.is_over or body.seat != hand.turn:
            raise _fail(line, f"seat {body.seat} acted out of turn")
        cause = body.default_cause
        prompted = cause in (
            common.DEFAULT_CAUSE_UNSPECIFIED,
            common.DEFAULT_CAUSE_TIMEOUT,
            common.DEFAULT_CAUSE_ILLEGAL_ATTEMPTS,
        )
        if prompted and (turn_seat != body.seat or body.turn_id != turn_id):
            raise _fail(line, f"seat {body.seat} acted without a prompt (turn {body.turn_id})")
        if cause == common.DEFAULT_CAUSE_ILLEGAL_ATTEMPTS and rejections < max_rejections:
            raise _fail(
                line, f"default action after {rejections} rejections, limit {max_rejections}"
            )
        try:
            action = parse_action(list(ev.played.play.cards) if is_play else None)
        except RulesError as exc:
            raise _fail(line, f"unreadable play: {exc}") from None
        if cause != common.DEFAULT_CAUSE_UNSPECIFIED and action != default_action(hand):
            raise _fail(line, "the default action is not a pass or the lowest legal lead")
        error = match.check(body.seat, action)
        if error is not None:
            raise _fail(
                line, f"an illegal action was accepted: {error.reason.value}: {error.message}"
            )
        outcome, result = match.apply(body.seat, action)
        if is_play:
            pl = ev.played
            if outcome.kind is None or pl.play.combination != KIND_TO_PB[outcome.kind]:
                raise _fail(line, "the combination is misnamed")
            if pl.cards_left != hand.hands[body.seat].bit_count():
                raise _fail(line, "cards_left is wrong")
            if pl.revolution != hand.revolution:
                raise _fail(line, "the revolution flag is wrong")
        elif ev.passed.forced_lead_pass != outcome.forced_lead_pass:
            raise _fail(line, "forced_lead_pass is wrong")
        if outcome.trick_cleared:
            expected.append(("trick_cleared", outcome.next_seat))
        if result is not None:
            expected.append(("hand_ended", result))

    def _check_hand_end(
        self, line: LogLine, he: common.HandEnded, result: HandResult, order: SuitOrder
    ) -> None:
        if he.hand_number != result.hand_number or he.winner != result.winner:
            raise _fail(line, f"hand {result.hand_number} was won by seat {result.winner}")
        for seat, left in enumerate(result.cards_left):
            got = [sc for sc in he.hands if sc.seat == seat]
            if len(got) != 1 or list(got[0].cards) != card_list(left, order):
                raise _fail(line, f"seat {seat}'s revealed cards are wrong")
        if list(he.scores) != list(result.scores):
            raise _fail(line, f"scores {list(he.scores)}, expected {list(result.scores)}")
        if list(he.totals) != list(result.totals):
            raise _fail(line, f"totals {list(he.totals)}, expected {list(result.totals)}")
