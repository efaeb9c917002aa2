"""A match machine driven by hand, with a fake clock in microseconds.

Every decision is kept as the server would log it, so tests can fold the log, verify it
with ``referee verify``'s own code, and compare.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.log.writer import EventLogWriter
from referee.match.machine import Decision, create, decide
from referee.match.settings import MatchSettings
from referee.match.state import MachineState, fold
from referee.protocol import common
from referee.protocol.convert import card_list
from referee.rules import Rules

T0 = 1_800_000_000_000_000
"""The fake clock's start (µs since the epoch)."""
MS = 1000
TOKENS = ("t0", "t1", "t2", "t3")


def settings(profile: str = "big-two", hands: int = 1, **kw: Any) -> MatchSettings:
    rules = Rules.for_profile(profile).with_options({"match_end": f"hands {hands}"})
    kw.setdefault("seed", "machine-tests")
    return MatchSettings(rules, **kw)


@dataclasses.dataclass
class Sim:
    """One match; ``log`` holds (command, event, time) as the server logs them."""

    settings: MatchSettings
    state: MachineState = dataclasses.field(init=False)
    log: list[tuple[common.Command, common.Event, int]] = dataclasses.field(default_factory=list)
    last: Decision | None = None

    def __post_init__(self) -> None:
        first = create("sim", self.settings, T0, TOKENS, software_version="t", protocol_version=1)
        self._keep(first)

    def _keep(self, d: Decision) -> Decision:
        for event in d.events:
            self.log.append((d.command, event, d.now))
        self.state = d.state
        self.last = d
        return d

    def do(self, command: common.Command, at: int) -> Decision:
        return self._keep(decide(self.state, command, at))

    # -- commands ---------------------------------------------------------------

    def connect(self, seat: int, at: int, name: str = "bot", legal: bool = True) -> Decision:
        return self.do(
            common.Command(
                connect=common.ConnectCommand(seat=seat, bot_name=name, want_legal_plays=legal)
            ),
            at,
        )

    def connect_all(self, at: int = T0) -> Decision:
        for seat in range(4):
            d = self.connect(seat, at)
        return d

    def disconnect(self, seat: int, at: int, cause: str = "gone") -> Decision:
        return self.do(
            common.Command(disconnect=common.DisconnectCommand(seat=seat, cause=cause)), at
        )

    def act(
        self,
        seat: int,
        at: int,
        cards: Sequence[str] | None = None,
        *,
        turn_id: int | None = None,
        malformed: bool = False,
    ) -> Decision:
        """A play of ``cards``, or a pass when None, for the current turn by default."""
        if turn_id is None:
            turn_id = self.state.turn.turn_id if self.state.turn is not None else 0
        action = common.ActionCommand(seat=seat, turn_id=turn_id, malformed=malformed)
        if malformed:
            pass
        elif cards is None:
            setattr(action, "pass", True)
        else:
            action.cards.extend(cards)
        return self.do(common.Command(action=action), at)

    def tick(self, at: int) -> Decision:
        return self.do(common.Command(timer=common.TimerCommand()), at)

    def cancel(self, at: int, reason: str = "stop") -> Decision:
        return self.do(common.Command(cancel=common.CancelCommand(reason=reason)), at)

    def restart(self, at: int) -> Decision:
        return self.do(common.Command(restart=common.RestartCommand(software_version="t2")), at)

    # -- looking ----------------------------------------------------------------

    @property
    def turn(self) -> Any:
        return self.state.turn

    def lowest(self, seat: int | None = None) -> list[str] | None:
        """The weakest legal play of the seat to act, or None (pass) when it may pass."""
        hand = self.state.rules.hand
        assert hand is not None
        plays = hand.legal_plays(seat)
        if plays.can_pass:
            return None
        return card_list(plays.masks[0], self.settings.rules.suit_order)

    def play_lowest(self, at: int) -> Decision:
        assert self.turn is not None and self.turn.prompted
        return self.act(self.turn.seat, at, self.lowest())

    def unheld(self, seat: int) -> str:
        hand = self.state.rules.hand
        assert hand is not None
        held = set(card_list(hand.hands[seat], self.settings.rules.suit_order))
        return next(r + s for r in "3456789TJQKA2" for s in "CSHD" if r + s not in held)

    def folded(self) -> MachineState:
        return fold("sim", ((e, t) for _, e, t in self.log), self.settings.seed)


def kinds(d: Decision | None) -> list[str]:
    assert d is not None
    return [e.WhichOneof("kind") or "" for e in d.events]


def body(event: common.Event) -> Any:
    return getattr(event, event.WhichOneof("kind") or "")


def write_log(sim: Sim, path: Path) -> None:
    """Write the simulated match as the server would: one append per decision."""
    writer = EventLogWriter.create(path, "sim")
    group: list[tuple[common.Event, int]] = []
    last_cmd: common.Command | None = None
    for cmd, event, at in sim.log:
        if last_cmd is not None and cmd is not last_cmd:
            writer.append([e for e, _ in group], group[0][1], last_cmd)
            group = []
        group.append((event, at))
        last_cmd = cmd
    writer.append([e for e, _ in group], group[0][1], last_cmd)
    writer.close()
