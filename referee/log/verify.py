"""Verify a match log: the hash chain, the seed commitment, and every decision.

For a schema-2 log, every logged command is decided again by the same match machine the
server runs, at the logged time, from the state the log has reached; the log must hold
exactly the events the machine decides, in order. That covers the deals (from the
revealed seed), every verdict on an action, every prompt, timeout, strike, default action
and its cause, the scores and the end. Schema-1 logs are checked by the rules of their
day (``verify_v1``). The first line that does not hold is reported with its number; a
bad log never raises.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from google.protobuf import json_format

from referee.log.errors import VerifyError
from referee.log.reader import LogFormatError, LogLine, LogRead, decisions, read_log
from referee.log.signing import check_trailer
from referee.log.writer import line_hash
from referee.match.machine import decide
from referee.match.state import EvolveError, MachineState, initial_state
from referee.protocol import LOG_SCHEMA_VERSION, common
from referee.protocol.convert import ts_us
from referee.rules import seed_commitment

__all__ = [
    "DecisionCutShort",
    "VerifyError",
    "VerifyReport",
    "redecide",
    "verify_loaded",
    "verify_log",
    "verify_read",
]


@dataclasses.dataclass(frozen=True, slots=True)
class VerifyReport:
    """The verdict on one log."""

    path: Path
    ok: bool
    lines: int
    hands: int
    problem: str | None
    line: int | None
    """The first bad line, from 1; None when the whole file is the problem (unreadable)."""
    final_hash: str = ""
    """SHA-256 of the last entry's line."""
    signed_by: str = ""
    """The key (base64) of the signature trailer that holds for this log; empty: none."""
    key_checked: bool = False
    """The signature was checked against a key the caller trusts (``--public-key``)."""
    unsigned: bool = False
    """The log verifies but has no signature trailer (cut short before the referee
    closed it, or written by a referee that does not sign): it proves nothing about who
    wrote it."""

    def summary(self) -> str:
        if self.unsigned and self.key_checked:
            return (
                f"UNSIGNED: {self.path}: {self.lines} lines, {self.hands} hands verified, but "
                "no signature trailer: the log was cut short before the referee closed it"
            )
        if self.ok:
            sig = ", unsigned"
            if self.signed_by:
                sig = ", signed by " + self.signed_by
                if not self.key_checked:
                    sig += " (not checked against a trusted key: give --public-key)"
            return f"OK: {self.path}: {self.lines} lines, {self.hands} hands verified{sig}"
        where = "" if self.line is None else f"line {self.line}: "
        return f"FAILED: {self.path}: {where}{self.problem}"


def verify_log(path: Path, public_key: bytes | None = None) -> VerifyReport:
    """Check everything a log claims; never raises for a bad log.

    With ``public_key`` (raw Ed25519), the log must also end with a signature trailer by
    that key: a log without one is not ``ok`` (``unsigned``). Without it, a trailer that
    is there must still sign this very log, whoever's key it names.
    """
    path = Path(path)
    try:
        read = read_log(path)
    except LogFormatError as exc:
        return VerifyReport(path, False, 0, 0, exc.message, exc.line)
    except OSError as exc:
        return VerifyReport(path, False, 0, 0, f"cannot read the log: {exc.strerror}", None)
    return verify_loaded(read, public_key)


def verify_loaded(read: LogRead, public_key: bytes | None = None) -> VerifyReport:
    """``verify_log`` on a log already read (by a reader that goes on to use it)."""
    report = verify_read(read)
    return _check_signature(read, report, public_key) if report.ok else report


def _check_signature(read: LogRead, report: VerifyReport, key: bytes | None) -> VerifyReport:
    """The file-level check around the rules: does the trailer sign this very log?"""
    checked = key is not None
    if read.trailer is None:
        return dataclasses.replace(report, ok=not checked, unsigned=True, key_checked=checked)
    problem = check_trailer(
        read.trailer,
        match_id=read.lines[0].entry.match_id,
        lines=len(read.lines),
        final_hash=report.final_hash,
        trusted_key=key,
    )
    if problem is not None:
        return dataclasses.replace(report, ok=False, problem=problem, line=len(read.lines) + 1)
    return dataclasses.replace(report, signed_by=read.trailer.public_key, key_checked=checked)


def verify_read(read: LogRead) -> VerifyReport:
    """``verify_log`` on a log already read."""
    hands = 0
    final = line_hash(read.lines[-1].raw) if read.lines else ""
    try:
        if not read.lines:
            raise VerifyError(1, "the log is empty")
        check_chain(read.lines)
        if read.truncated:
            raise VerifyError(len(read.lines) + 1, "the line is cut short (the log is incomplete)")
        version = read.lines[0].entry.schema_version
        if version == 1:
            from referee.log.verify_v1 import check_v1

            hands = check_v1(read)
        else:
            hands = _Redecider(read.lines).run()
    except VerifyError as exc:
        return VerifyReport(read.path, False, len(read.lines), hands, exc.message, exc.line, final)
    return VerifyReport(read.path, True, len(read.lines), hands, None, None, final)


def check_chain(lines: list[LogLine]) -> None:
    """Sequence numbers, one match id, one schema version, and each line's prev_hash."""
    first = lines[0].entry
    prev = ""
    for i, line in enumerate(lines, start=1):
        e = line.entry
        if e.seq != i:
            raise VerifyError(line.number, f"sequence number {e.seq}, expected {i}")
        if e.match_id != first.match_id:
            raise VerifyError(
                line.number, f"match id {e.match_id!r} differs from {first.match_id!r}"
            )
        if e.schema_version != first.schema_version:
            raise VerifyError(
                line.number, f"schema version {e.schema_version} in a log of {first.schema_version}"
            )
        if e.prev_hash != prev:
            raise VerifyError(line.number, "prev_hash is not the SHA-256 of the previous line")
        prev = line_hash(line.raw)
    if first.schema_version not in (1, LOG_SCHEMA_VERSION):
        raise VerifyError(1, f"unknown schema version {first.schema_version}")


def _describe(event: common.Event) -> str:
    kind = event.WhichOneof("kind") or "nothing"
    body = (
        json_format.MessageToDict(getattr(event, kind), preserving_proto_field_name=True)
        if kind != "nothing"
        else {}
    )
    text = ", ".join(f"{k}={v}" for k, v in body.items())
    if len(text) > 160:
        text = text[:159] + "…"
    return f"{kind}({text})"


class _Redecider:
    """Decides every logged command again and compares the events."""

    def __init__(self, lines: list[LogLine]) -> None:
        self.lines = lines
        self.hands = 0

    def run(self) -> int:
        first, last = self.lines[0], self.lines[-1]
        created = first.entry
        if created.event.WhichOneof("kind") != "match_created" or not created.command.HasField(
            "create"
        ):
            raise VerifyError(1, "the first line must be match_created with the create command")
        if last.kind != "match_ended":
            raise VerifyError(last.number + 1, "the log ends before the match ended (incomplete)")
        seed = last.entry.event.match_ended.seed
        if seed_commitment(seed) != created.event.match_created.seed_commitment:
            raise VerifyError(
                last.number, "SHA-256 of the revealed seed does not match the commitment"
            )
        mc = created.event.match_created
        if len(mc.token_hashes) != 4 or not mc.token_salt:
            raise VerifyError(1, "match_created must hold a token salt and four token hashes")
        try:
            state = initial_state(created.match_id, mc, ts_us(created.time), seed)
        except EvolveError as exc:
            raise VerifyError(1, str(exc)) from None
        for command, group in decisions(self.lines[1:]):
            state = redecide(state, command, group)
            self.hands += sum(line.kind == "hand_ended" for line in group)
        if not state.over:
            raise VerifyError(last.number, "the match is not over where the log says it ended")
        return self.hands


class DecisionCutShort(VerifyError):
    """The lines hold the first events of the decision, not all of them."""


def redecide(
    state: MachineState, command: common.Command | None, group: list[LogLine]
) -> MachineState:
    """The state after one logged decision, decided again from ``state``; VerifyError at
    the first line that is not what the machine decides (DecisionCutShort when the lines
    are right but its last events are missing)."""
    head = group[0]
    if command is None:
        raise VerifyError(head.number, "an entry that follows no command")
    kind = command.WhichOneof("kind")
    if kind in (None, "create"):
        raise VerifyError(head.number, f"a {kind or 'empty'} command in the middle of a match")
    at = ts_us(head.entry.time)
    if at < state.clock:
        raise VerifyError(head.number, "the time goes back")
    try:
        decision = decide(state, command, at)
    except (EvolveError, ValueError) as exc:
        raise VerifyError(head.number, f"a command the referee cannot take: {exc}") from None
    except Exception as exc:  # a crafted field no decision expects
        raise VerifyError(
            head.number, f"a malformed command ({type(exc).__name__}: {exc})"
        ) from None
    for i, line in enumerate(group):
        if ts_us(line.entry.time) != at:
            raise VerifyError(line.number, "an event of one decision at another time")
        if i >= len(decision.events):
            logged = _describe(line.entry.event)
            raise VerifyError(
                line.number, f"the referee decides nothing more here, the log has {logged}"
            )
        want = decision.events[i]
        if line.entry.event != want:
            logged = _describe(line.entry.event)
            raise VerifyError(
                line.number,
                f"the referee decides {_describe(want)} here, the log has {logged}",
            )
    if len(decision.events) > len(group):
        missing = decision.events[len(group)]
        raise DecisionCutShort(group[-1].number + 1, f"missing {_describe(missing)}")
    return decision.state
