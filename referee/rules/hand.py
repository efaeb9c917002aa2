"""One hand (one deal): turn order, passes and lock-out, tricks, going out.

``HandState.apply`` is the one way to change a hand and it checks legality first; an
illegal action raises ``IllegalActionError`` and leaves the state untouched.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from referee.rules.cards import ALL_CARDS_MASK, format_cards
from referee.rules.combos import Combination, Context, Kind, context_for
from referee.rules.errors import IllegalActionError, Reason
from referee.rules.moves import LegalPlays
from referee.rules.options import Direction, Rules

SEATS: Final = 4


@dataclasses.dataclass(frozen=True, slots=True)
class Action:
    """A seat's action: a play of ``cards`` (a mask), or a pass when ``cards`` is 0."""

    cards: int = 0

    @property
    def is_pass(self) -> bool:
        return self.cards == 0

    @classmethod
    def pass_(cls) -> Action:
        return cls(0)


PASS: Final = Action(0)


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """What one applied action did, for events and logs."""

    seat: int
    action: Action
    kind: Kind | None
    forced_lead_pass: bool
    trick_cleared: bool
    hand_over: bool
    revolution: bool
    next_seat: int | None


@dataclasses.dataclass(frozen=True, slots=True)
class SeatView:
    """What one seat may know: its own cards and the public state, nothing else."""

    seat: int
    hand: int
    card_counts: tuple[int, ...]
    turn: int | None
    table: int
    table_kind: Kind | None
    table_seat: int | None
    locked_out: tuple[bool, ...]
    must_include: int
    revolution: bool
    lone_two_rule: bool
    winner: int | None


class HandState:
    """The state of one hand, from the deal to the first player out."""

    def __init__(
        self,
        rules: Rules,
        hands: tuple[int, int, int, int] | list[int],
        leader: int,
        must_include: int = 0,
    ) -> None:
        if len(hands) != SEATS:
            raise ValueError("a hand is dealt to exactly four seats")
        union = 0
        for h in hands:
            if union & h or not 0 <= h <= ALL_CARDS_MASK:
                raise ValueError("the four hands overlap or hold cards outside the deck")
            union |= h
        if not 0 <= leader < SEATS:
            raise ValueError(f"no seat {leader}")
        self.rules = rules
        self.hands = list(hands)
        self.turn: int | None = leader
        self.step = 1 if rules.direction is Direction.CLOCKWISE else 3
        self.table: Combination | None = None
        self.table_seat: int | None = None
        self.passes = 0  # passes since the last play (non-locking rule)
        self.locked = [False] * SEATS
        self.must_include = must_include
        self.revolution = False
        self.lone_two_rule = rules.no_finish_on_lone_two
        self.lead_passes = 0  # consecutive forced passes on a lead
        self.winner: int | None = None
        self.ctx: Context = context_for(rules, False)

    @classmethod
    def resume(
        cls,
        rules: Rules,
        hands: tuple[int, int, int, int] | list[int],
        turn: int,
        *,
        table: int = 0,
        table_seat: int | None = None,
        passes: int = 0,
        locked: tuple[bool, ...] = (False,) * SEATS,
        must_include: int = 0,
        revolution: bool = False,
        lone_two_rule: bool | None = None,
        lead_passes: int = 0,
    ) -> HandState:
        """A hand in progress from its public state and every seat's cards: what a seat
        sees with the cards it cannot see filled in (a search's determinisation).
        Raises ValueError for a state no hand can be in."""
        state = cls(rules, hands, turn, must_include)
        if revolution:
            state.revolution = True
            state.ctx = context_for(rules, True)
        if table:
            combo = state.ctx.classify(table)
            if combo is None or table_seat is None or not 0 <= table_seat < SEATS:
                raise ValueError("the play to beat is no play, or has no seat")
            state.table = combo
            state.table_seat = table_seat
        state.passes = passes
        state.locked = list(locked)
        if lone_two_rule is not None:
            state.lone_two_rule = lone_two_rule
        state.lead_passes = lead_passes
        return state

    def clone(self) -> HandState:
        other = object.__new__(HandState)
        other.__dict__.update(self.__dict__)
        other.hands = list(self.hands)
        other.locked = list(self.locked)
        return other

    # -- queries --------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    def card_counts(self) -> tuple[int, ...]:
        return tuple(h.bit_count() for h in self.hands)

    def legal_plays(self, seat: int | None = None) -> LegalPlays:
        """The legal plays of ``seat`` (default: the seat to act)."""
        if seat is None:
            seat = self.turn
        if seat is None or seat != self.turn:
            return LegalPlays(self.ctx, 0, self.table)  # not this seat's turn: nothing
        return LegalPlays(
            self.ctx, self.hands[seat], self.table, self.must_include, self.lone_two_rule
        )

    def view(self, seat: int) -> SeatView:
        return SeatView(
            seat=seat,
            hand=self.hands[seat],
            card_counts=self.card_counts(),
            turn=self.turn,
            table=self.table.mask if self.table else 0,
            table_kind=self.table.kind if self.table else None,
            table_seat=self.table_seat,
            locked_out=tuple(self.locked),
            must_include=self.must_include,
            revolution=self.revolution,
            lone_two_rule=self.lone_two_rule,
            winner=self.winner,
        )

    def check(self, seat: int, action: Action) -> IllegalActionError | None:
        """None when ``seat`` may take ``action`` now, else the error saying why not."""
        if self.winner is not None:
            return IllegalActionError(Reason.HAND_OVER, "the hand is over")
        if not 0 <= seat < SEATS:
            return IllegalActionError(Reason.NOT_SEAT_HOLDER, f"no seat {seat}")
        if seat != self.turn:
            if self.locked[seat]:
                return IllegalActionError(
                    Reason.LOCKED_OUT, "you passed and are locked out until the next lead"
                )
            return IllegalActionError(
                Reason.NOT_YOUR_TURN, f"it is seat {self.turn}'s turn, not seat {seat}'s"
            )
        plays = self.legal_plays(seat)
        if action.is_pass:
            return plays.why_not_pass()
        return plays.why_not(action.cards)

    # -- the one way to change state ------------------------------------------

    def apply(self, seat: int, action: Action) -> Outcome:
        """Apply a legal action, or raise ``IllegalActionError`` and change nothing."""
        error = self.check(seat, action)
        if error is not None:
            raise error
        if action.is_pass:
            return self._pass(seat, action)
        return self._play(seat, action)

    def apply_legal(self, seat: int, action: Action) -> Outcome:
        """Apply an action the caller took from this seat's legal plays (or a pass it
        may make), without checking it again: a search's playouts, where the check would
        double the cost. Anything else must go through ``apply``."""
        if action.is_pass:
            return self._pass(seat, action)
        return self._play(seat, action)

    def _next(self, seat: int) -> int:
        return (seat + self.step) % SEATS

    def _play(self, seat: int, action: Action) -> Outcome:
        combo = self.ctx.classify(action.cards)
        assert combo is not None  # checked by apply()
        self.hands[seat] &= ~action.cards
        self.must_include = 0
        self.lead_passes = 0
        toggled = False
        if combo.kind is Kind.FOUR_OF_A_KIND and self.rules.revolution:
            self.revolution = not self.revolution
            self.ctx = context_for(self.rules, self.revolution)
            combo = self.ctx.classify(action.cards) or combo
            toggled = True
        self.table = combo
        self.table_seat = seat
        self.passes = 0
        if not self.hands[seat]:
            self.winner = seat
            self.turn = None
            return Outcome(seat, action, combo.kind, False, False, True, toggled, None)
        nxt = self._next_unlocked(seat)
        if nxt is None:  # everyone else is locked out: the trick is won at once
            self._clear(seat)
            return Outcome(seat, action, combo.kind, False, True, False, toggled, seat)
        self.turn = nxt
        return Outcome(seat, action, combo.kind, False, False, False, toggled, nxt)

    def _next_unlocked(self, seat: int) -> int | None:
        s = self._next(seat)
        while s != seat:
            if not self.locked[s]:
                return s
            s = self._next(s)
        return None

    def _pass(self, seat: int, action: Action) -> Outcome:
        if self.table is None:  # the forced pass of no_finish_on_lone_two
            self.lead_passes += 1
            if self.lead_passes >= SEATS:
                self.lone_two_rule = False  # the lead went round: the restriction lapses
            nxt = self._next(seat)
            self.turn = nxt
            return Outcome(seat, action, None, True, False, False, False, nxt)
        leader = self.table_seat
        assert leader is not None
        if self.rules.pass_locks_out:
            self.locked[seat] = True
            after = self._next_unlocked(seat)
            if after is None or after == leader:
                self._clear(leader)
                return Outcome(seat, action, None, False, True, False, False, leader)
            self.turn = after
            return Outcome(seat, action, None, False, False, False, False, after)
        self.passes += 1
        if self.passes >= SEATS - 1:
            self._clear(leader)
            return Outcome(seat, action, None, False, True, False, False, leader)
        nxt = self._next(seat)
        self.turn = nxt
        return Outcome(seat, action, None, False, False, False, False, nxt)

    def _clear(self, leader: int) -> None:
        self.table = None
        self.table_seat = None
        self.passes = 0
        self.locked = [False] * SEATS
        self.turn = leader

    def describe(self) -> str:
        order = self.rules.suit_order
        table = format_cards(self.table.mask, order) if self.table else "-"
        return f"turn={self.turn} table={table} counts={self.card_counts()}"
