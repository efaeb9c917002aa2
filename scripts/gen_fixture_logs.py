#!/usr/bin/env python3
"""Write the schema-2 fixture logs: tests/fixtures/logs/v2/.

Each log is one match played through the referee's own parts, as a server would play it:
the match machine (``create``, ``decide``) decides every command, ``EventLogWriter``
writes each decision, a crash of the referee is a torn line that ``read_log``, ``recover``
and ``EventLogWriter.resume`` recover from (as ``MatchRegistry._resume`` does), and
``LogSigner`` signs the closed log (as ``MatchRegistry._on_closed`` does). What a server
would read off its clock and its sockets (when each command arrived, how late a timer
woke) is scripted instead, from a hash of the match's name, so that every byte of every
file is the same on each run: the token salt, the seed, the software version and the
signing key are fixed too. The key is a test key, published beside the logs
(``signing-key.pub``); its private half is derived below and is no secret.

Every match has a crash (a bot's, or the referee's), a timeout, a rejection and a
disconnect; each has a few more incidents of its own (see ``SPECS``), and the generator
refuses to write a log in which one of its incidents did not happen.
tests/match/test_fixture_logs.py regenerates them in memory and compares bytes.
Run from the repository root:

    .venv/bin/python scripts/gen_fixture_logs.py           # rewrite every file
    .venv/bin/python scripts/gen_fixture_logs.py --check   # exit 1 if any file is stale
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import heapq
import json
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from referee.log.reader import read_log
from referee.log.recovery import recover
from referee.log.signing import LogSigner, trailer_line
from referee.log.writer import EventLogWriter
from referee.match.machine import Decision, create, decide
from referee.match.settings import MatchSettings
from referee.match.state import MachineState
from referee.protocol import PROTOCOL_VERSION, common
from referee.protocol.convert import card_list, ts_us
from referee.rules import Rules

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "tests" / "fixtures" / "logs" / "v2"
KEY_FILE = "signing-key.pub"
SOFTWARE_VERSION = "0.1.0"
"""Fixed, so that a version bump does not change the fixtures."""
T0 = 1_797_328_800_000_000
"""2026-12-15T10:00:00Z, in µs: the first match's creation."""
MS = 1000
SIGNING_KEY = Ed25519PrivateKey.from_private_bytes(
    hashlib.sha256(b"pusoy-referee fixture logs: a published test key").digest()
)


def _rejected(
    entries: list[common.LogEntry], test: Callable[[common.ActionRejected], bool]
) -> bool:
    return any(
        e.event.HasField("action_rejected") and test(e.event.action_rejected) for e in entries
    )


def _defaulted(entries: list[common.LogEntry], cause: common.DefaultCause.ValueType) -> bool:
    return any(
        getattr(e.event, kind).default_cause == cause
        for e in entries
        for kind in ("played", "passed")
        if e.event.HasField(kind)
    )


def _disconnected(entries: list[common.LogEntry], gone: bool) -> bool:
    return any(
        e.event.HasField("seat_disconnected") and e.event.seat_disconnected.gone == gone
        for e in entries
    )


INCIDENTS: dict[str, tuple[str, Callable[[list[common.LogEntry]], bool]]] = {
    "reject": (
        "a play of a card the seat does not hold, rejected; then a legal play",
        lambda es: _rejected(es, lambda r: r.reason == common.REJECTION_REASON_CARD_NOT_IN_HAND),
    ),
    "reject-3": (
        "three rejected attempts: the turn is played by default (ILLEGAL_ATTEMPTS)",
        lambda es: _defaulted(es, common.DEFAULT_CAUSE_ILLEGAL_ATTEMPTS),
    ),
    "malformed": (
        "an action that is neither a play nor a pass, rejected; then a legal play",
        lambda es: _rejected(es, lambda r: r.reason == common.REJECTION_REASON_MALFORMED_ACTION),
    ),
    "out-of-turn": (
        "another seat acts while this one is prompted (rejected, attempt 0)",
        lambda es: _rejected(es, lambda r: r.reason == common.REJECTION_REASON_NOT_YOUR_TURN),
    ),
    "timeout": (
        "no answer: played by default when the timer fires (TIMEOUT, a strike)",
        lambda es: _defaulted(es, common.DEFAULT_CAUSE_TIMEOUT),
    ),
    "late": (
        "a timeout, then the answer arrives (rejected as late)",
        lambda es: _rejected(es, lambda r: r.late),
    ),
    "bank": (
        "an answer after the deadline, within the time bank (charged to it)",
        lambda es: any(e.event.HasField("played") and e.event.played.elapsed_ms > 5000 for e in es),
    ),
    "disconnect": (
        "the stream closes during the seat's prompt (played by default at once); the bot "
        "connects again within its grace",
        lambda es: (
            _disconnected(es, gone=False) and any(e.event.seat_connected.reconnect for e in es)
        ),
    ),
    "away": (
        "the stream closes; the bot is back only after its next turns were played by "
        "default when its grace ran out",
        lambda es: (
            _disconnected(es, gone=False) and _defaulted(es, common.DEFAULT_CAUSE_DISCONNECTED)
        ),
    ),
    "crash": (
        "the bot's process dies: its stream is cancelled, then it is gone for good and "
        "its turns are played by default at once",
        lambda es: _disconnected(es, gone=True),
    ),
    "referee-crash": (
        "the referee dies while writing an answer's line (the torn line is cut off), "
        "restarts, and every bot connects again",
        lambda es: any(e.event.referee_restarted.torn_bytes > 0 for e in es),
    ),
    "cancel": (
        "the organiser cancels the match",
        lambda es: any(e.event.match_ended.status == common.MATCH_STATUS_CANCELLED for e in es),
    ),
}
"""What can happen at a prompt: what it is, and how its log shows it."""


@dataclasses.dataclass(frozen=True)
class Spec:
    """One fixture log: the match, and what happens at which prompt (counted from 1)."""

    name: str
    profile: str
    hands: int
    incidents: Mapping[int, str]
    bots: tuple[str, str, str, str] = ("random", "greedy", "random", "greedy")
    """Each seat's bot: "greedy" plays its weakest play, any other picks at random. The
    name is the seat's name and the one its Hello gives (any text: a quote, a tab and
    characters beyond ASCII show how the log's JSON writes them)."""
    time_bank_ms: int = 0
    max_strikes: int = 0
    gone_before_connecting: int | None = None
    """A seat whose bot never started (its process could not be spawned)."""

    @property
    def match_id(self) -> str:
        day = 15 + SPECS.index(self)
        return f"202612{day:02d}-100000-{_hash(self.name)[:8]}"

    @property
    def created(self) -> int:
        return T0 + SPECS.index(self) * 86_400_000_000

    def settings(self) -> MatchSettings:
        rules = Rules.for_profile(self.profile).with_options(
            {"match_end": f"hands {self.hands}", "max_hands": 1000}
        )
        a, b, c, d = (f"{bot}-{seat}" for seat, bot in enumerate(self.bots))
        return MatchSettings(
            rules,
            seat_names=(a, b, c, d),
            seed=f"fixture/{self.name}",
            time_bank_ms=self.time_bank_ms,
            max_strikes=self.max_strikes,
        )


SPECS: tuple[Spec, ...] = (
    Spec(
        "pusoy-dos",
        "pusoy-dos",
        hands=2,
        time_bank_ms=1500,
        max_strikes=2,
        incidents={
            3: "reject",
            5: "bank",
            7: "timeout",
            9: "disconnect",
            11: "timeout",
            14: "late",
            20: "crash",
        },
    ),
    Spec(
        "pusoy-dos-chips",
        "pusoy-dos-chips",
        hands=2,
        incidents={
            2: "malformed",
            4: "out-of-turn",
            6: "away",
            11: "timeout",
            13: "reject-3",
            17: "crash",
        },
    ),
    Spec(
        "big-two",
        "big-two",
        hands=2,
        incidents={2: "reject", 5: "disconnect", 8: "timeout", 12: "referee-crash", 30: "crash"},
    ),
    Spec(
        "big-two-cancelled",
        "big-two",
        hands=3,
        bots=("greedy", "random", "mybot", 'zoë "♠" 🂡\tbot'),
        gone_before_connecting=2,
        incidents={3: "reject", 6: "timeout", 8: "disconnect", 12: "cancel"},
    ),
)
"""Every profile; between them every incident; each with a crash, a timeout, a
rejection and a disconnect (the cancelled one's crash is the bot that never started)."""


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class Dice:
    """Numbers from a hash of the match's name and a counter: the same on every run and
    every Python (``random``'s algorithms are not promised to stay)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.n = 0

    def below(self, n: int) -> int:
        self.n += 1
        digest = hashlib.sha256(f"{self.name}/{self.n}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % n

    def between(self, low: int, high: int) -> int:
        return low + self.below(high - low + 1)


class Match:
    """One match driven to its end: bots answer prompts, timers fire when due."""

    def __init__(self, spec: Spec, folder: Path) -> None:
        self.spec = spec
        self.settings = spec.settings()
        self.order = self.settings.rules.suit_order
        self.dice = Dice(spec.name)
        self.path = folder / f"{spec.match_id}.jsonl"
        self.writer = EventLogWriter.create(self.path, spec.match_id)
        self.queue: list[tuple[int, int, common.Command | None]] = []
        """What arrives when: commands, and None for the referee's own crash."""
        self.crash_play: list[str] | None = None
        """The answer being logged when the referee crashes (None: a pass)."""
        self.queued = 0
        self.prompts = 0
        self.happened: set[str] = set()
        self.crashed: set[int] = set()
        self.now = spec.created
        tokens = [f"token-{spec.name}-{seat}" for seat in range(4)]
        self._log(
            create(
                spec.match_id,
                self.settings,
                self.now,
                tokens,
                software_version=SOFTWARE_VERSION,
                protocol_version=PROTOCOL_VERSION,
                salt=_hash(spec.name)[8:40],
            )
        )

    # -- the server's part --------------------------------------------------------

    def _log(self, decision: Decision) -> None:
        self.writer.append(decision.events, decision.now, decision.command)
        self.state: MachineState = decision.state
        self.now = decision.now
        for event in decision.events:
            if event.HasField("turn_started"):
                self.prompts += 1
                self._prompted(event.turn_started)

    def submit(self, at: int, command: common.Command | None) -> None:
        heapq.heappush(self.queue, (at, self.queued, command))
        self.queued += 1

    def play(self) -> None:
        """Connect the bots, then decide whatever comes first (a command, or the timer
        once due, woken a little late as a server's loop is) until the match is over."""
        for seat, bot in enumerate(self.spec.bots):
            at = self.now + (seat + 1) * self.dice.between(20 * MS, 60 * MS)
            if seat == self.spec.gone_before_connecting:
                cause = "its bot could not be started: No such file or directory"
                self.submit(at, _disconnect(seat, cause, gone=True))
                self.happened.add("crash")
            else:
                self.submit(at, _connect(seat, bot))
        while not self.state.over:
            due = self.state.due()
            wake = None if due is None else max(due, self.now) + self.dice.between(80, 2 * MS)
            if self.queue and (wake is None or self.queue[0][0] < wake):
                at, _, command = heapq.heappop(self.queue)
                if command is None:
                    self.referee_crash(at)
                else:
                    self._log(decide(self.state, command, max(at, self.now)))
            elif wake is not None:
                self._log(decide(self.state, common.Command(timer=common.TimerCommand()), wake))
            else:
                raise RuntimeError(f"{self.spec.name}: the match waits for nothing")
        signer = LogSigner(SIGNING_KEY)
        trailer = signer.trailer(self.spec.match_id, self.writer.seq, self.writer.last_hash)
        self.writer.write_trailer(trailer_line(trailer))
        self.writer.close()
        entries = [line.entry for line in read_log(self.path).lines]
        missing = {i for i in self.spec.incidents.values() if not INCIDENTS[i][1](entries)}
        missing |= set(self.spec.incidents.values()) - self.happened
        if missing:
            raise RuntimeError(f"{self.spec.name}: {', '.join(sorted(missing))} did not happen")

    def referee_crash(self, at: int) -> None:
        """The referee dies while the acting seat's answer is being logged: part of the
        decision's first line is on disk. The restarted referee cuts it off, folds the log
        and decides ``restart``; the bots, whose streams died with it, connect again."""
        assert self.state.turn is not None
        seat = self.state.turn.seat
        whole = self.writer.size
        self._log(decide(self.state, _action(seat, self.state, self.crash_play), at))
        self.writer.close()
        data = self.path.read_bytes()
        first = data.index(b"\n", whole) - whole
        self.path.write_bytes(data[: whole + self.dice.between(40, first - 1)])
        recovery = recover(read_log(self.path), self.settings.seed)
        self.state = recovery.state
        last = recovery.last
        self.writer = EventLogWriter.resume(
            self.path, self.spec.match_id, last.entry.seq, last.raw, recovery.size
        )
        self.queue.clear()
        restarted = at + self.dice.between(3000 * MS, 6000 * MS)
        self._log(decide(self.state, recovery.restart(SOFTWARE_VERSION), restarted))
        for other, bot in enumerate(self.spec.bots):
            if other not in self.crashed:
                back = restarted + self.dice.between(200 * MS, 2500 * MS)
                self.submit(back, _connect(other, bot))

    # -- the bots' part -----------------------------------------------------------

    def _prompted(self, turn: common.TurnStarted) -> None:
        """A bot's answers to its prompt, as the commands they become, when they arrive."""
        seat, state = turn.seat, self.state
        at = self.now + self.dice.between(5 * MS, 400 * MS)
        incident = self.spec.incidents.get(self.prompts)
        if incident is not None:
            self.happened.add(incident)
        deadline = ts_us(turn.deadline)
        cards = self._choose(seat)
        if incident is None:
            self.submit(at, _action(seat, state, cards))
        elif incident == "reject":
            self.submit(at, _action(seat, state, [self._unheld(seat)]))
            self.submit(at + self.dice.between(5 * MS, 90 * MS), _action(seat, state, cards))
        elif incident == "reject-3":
            for n in range(3):
                self.submit(at + n * 20 * MS, _action(seat, state, [self._unheld(seat)]))
        elif incident == "malformed":
            self.submit(at, _action(seat, state, [], malformed=True))
            self.submit(at + 30 * MS, _action(seat, state, cards))
        elif incident == "out-of-turn":
            other = (seat + 2) % 4
            self.submit(at - 3 * MS, _action(other, state, self._choose(other) or ["3C"]))
            self.submit(at, _action(seat, state, cards))
        elif incident == "timeout":
            pass  # the bot is stuck; the timer decides
        elif incident == "late":
            late = deadline + turn.time_bank_ms * MS + 300 * MS
            self.submit(late, _action(seat, state, cards))
        elif incident == "bank":
            self.submit(deadline + 900 * MS + 17, _action(seat, state, cards))
        elif incident in ("disconnect", "away"):
            self.submit(at, _disconnect(seat, "stream closed by the bot"))
            later = 600 * MS if incident == "disconnect" else 9000 * MS
            self.submit(at + later, _connect(seat, self.spec.bots[seat]))
        elif incident == "crash":
            self.crashed.add(seat)
            self.submit(at, _disconnect(seat, "stream cancelled by the bot"))
            self.submit(at + 3 * MS, _disconnect(seat, "its bot exited with status 1", gone=True))
        elif incident == "referee-crash":
            self.crash_play = cards
            self.submit(at, None)
        elif incident == "cancel":
            self.submit(
                at - 1 * MS,
                common.Command(cancel=common.CancelCommand(reason="stopped by the organiser")),
            )
        else:
            raise ValueError(f"unknown incident {incident!r}")

    def _choose(self, seat: int) -> list[str] | None:
        """A legal play of the seat to act (None: a pass), as its bot picks it: the
        greedy bot its weakest play, the random one any play or a pass."""
        hand = self.state.rules.hand
        assert hand is not None
        plays = hand.legal_plays(seat)
        options: list[int | None] = list(plays.masks)
        if plays.can_pass:
            options.append(None)
        if self.spec.bots[seat] == "greedy":
            mask = options[0]
        else:
            mask = options[self.dice.below(len(options))]
        if mask is None:
            return None
        cards = card_list(mask, self.order)
        return [c.lower() for c in cards] if seat == 3 else cards  # any case is accepted

    def _unheld(self, seat: int) -> str:
        hand = self.state.rules.hand
        assert hand is not None
        held = set(card_list(hand.hands[seat], self.order))
        return next(r + s for r in "AKQJT98765432" for s in "SHDC" if r + s not in held)


def _connect(seat: int, bot: str) -> common.Command:
    return common.Command(
        connect=common.ConnectCommand(seat=seat, bot_name=bot, want_legal_plays=bot == "greedy")
    )


def _disconnect(seat: int, cause: str, *, gone: bool = False) -> common.Command:
    return common.Command(disconnect=common.DisconnectCommand(seat=seat, cause=cause, gone=gone))


def _action(
    seat: int,
    state: MachineState,
    cards: list[str] | None,
    *,
    malformed: bool = False,
) -> common.Command:
    """The seat's answer to the turn in force: a play of ``cards``, or a pass (None)."""
    turn_id = state.turn.turn_id if state.turn is not None else 0
    action = common.ActionCommand(seat=seat, turn_id=turn_id, malformed=malformed)
    if malformed:
        pass
    elif cards is None:
        setattr(action, "pass", True)
    else:
        action.cards.extend(cards)
    return common.Command(action=action)


def public_key_text() -> str:
    return LogSigner(SIGNING_KEY).public_key_text


def readme() -> str:
    """The folder's README: which log is which match, and what happens in it."""
    out = [
        "# Schema-2 fixture logs",
        "",
        "Written by `scripts/gen_fixture_logs.py` (do not edit by hand: run it, and",
        "tests/match/test_fixture_logs.py checks that it writes these very bytes). Each log is",
        f"signed by the test key in `{KEY_FILE}` (its private half is in the script):",
        "",
        "    cd tests/fixtures/logs/v2",
        f"    referee verify --public-key {KEY_FILE} *.jsonl",
        "",
    ]
    for spec in SPECS:
        settings = spec.settings()
        out += [
            f"## {spec.match_id}.jsonl: {spec.name}",
            "",
            f"Profile {spec.profile}, {spec.hands} hands, seats "
            + ", ".join(json.dumps(name, ensure_ascii=False) for name in settings.seat_names)
            + (f", a time bank of {spec.time_bank_ms} ms" if spec.time_bank_ms else "")
            + (f", benched after {spec.max_strikes} strikes" if spec.max_strikes else "")
            + ".",
            "",
        ]
        if spec.gone_before_connecting is not None:
            out.append(
                f"- before the deal: seat {spec.gone_before_connecting}'s bot cannot be started"
            )
        for prompt, incident in sorted(spec.incidents.items()):
            out.append(f"- prompt {prompt}: {INCIDENTS[incident][0]}")
        out.append("")
    return "\n".join(out)


def render(folder: Path) -> None:
    """Write every fixture log, the public key and the README into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for spec in SPECS:
        Match(spec, folder).play()
    (folder / KEY_FILE).write_text(public_key_text() + "\n", encoding="ascii")
    (folder / "README.md").write_text(readme(), encoding="utf-8")


def rendered() -> dict[str, bytes]:
    """Every file ``render`` writes, by name."""
    with tempfile.TemporaryDirectory() as tmp:
        render(Path(tmp))
        return {p.name: p.read_bytes() for p in sorted(Path(tmp).iterdir())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the schema-2 fixture logs.")
    parser.add_argument("--check", action="store_true", help="only check the files are current")
    args = parser.parse_args(argv)
    files = rendered()
    current = {p.name: p.read_bytes() for p in OUT_DIR.glob("*")}
    if args.check:
        if current != files:
            print(f"{OUT_DIR.relative_to(ROOT)} is stale: run scripts/gen_fixture_logs.py")
            return 1
        return 0
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for stale in set(current) - set(files):
        (OUT_DIR / stale).unlink()
    for name, data in files.items():
        (OUT_DIR / name).write_bytes(data)
    print(f"wrote {len(SPECS)} logs, {KEY_FILE} and README.md to {OUT_DIR.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
