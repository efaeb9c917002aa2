"""``referee verify --tournament DIR``: a whole tournament folder, checked from its logs.

Duplicate deals are only fair if the matches of a group really were played on the same
deals, in the documented seatings. Each log proves its own match (``verify_log``); this
adds what no single log can:

1. every log in ``logs/`` verifies, and every one belongs to a results line;
2. the schedule is rebuilt from ``tournament.json`` alone (its identity, master seed
   and hash; ``referee.tournament.schedule.plan``), and every match was played as
   scheduled: its seating (the log's seat names) and its seed (revealed in the log's
   ``match_ended``, so the deals follow from it: docs/deals.md);
3. matches with the same seed (a deal group, and under ``remote_deals = "unseen"``
   the matches that borrowed its deal) were dealt the same cards, hand by hand (their
   ``hand_dealt`` events compared); in each complete group every bot held every seat's
   cards as often as the seatings say; a remote bot under ``remote_deals = "unseen"``
   was never dealt the same deal twice;
4. each results line agrees with its log (seats, places, totals, scores).

It reads; it never writes to the folder.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from referee.log.reader import LogFormatError, LogRead, read_log
from referee.log.summary import summarize_read
from referee.log.traces import trace_path, verify_traces
from referee.log.verify import VerifyReport, verify_log
from referee.pools import process_pool
from referee.rules import SEATS
from referee.tournament.config import Seatings, identity_hash
from referee.tournament.results import MatchResult
from referee.tournament.schedule import MatchSpec, plan

Deal = tuple[tuple[str, ...], ...]
"""One hand's four hands, seats 0..3, each sorted."""


@dataclasses.dataclass
class TournamentReport:
    """The verdict on a tournament folder."""

    folder: Path
    logs: list[VerifyReport] = dataclasses.field(default_factory=list)
    problems: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    groups: int = 0
    """Deal groups with at least two matches, checked for shared deals."""
    matches: int = 0
    traces: int = 0
    """Model seats' traces beside the logs, each checked against its log's hashes."""

    @property
    def ok(self) -> bool:
        return not self.problems and all(r.ok for r in self.logs)

    def summary(self) -> str:
        if self.ok:
            traces = f", {self.traces} model traces bound to them" if self.traces else ""
            return (
                f"OK: {self.folder}: {len(self.logs)} logs verified{traces}; {self.matches} "
                f"matches played as scheduled; {self.groups} deal groups dealt the same cards "
                "in the documented seatings; the results agree with the logs"
            )
        failed = sum(not r.ok for r in self.logs)
        return (
            f"FAILED: {self.folder}: {failed} of {len(self.logs)} logs do not verify, "
            f"{len(self.problems)} other problems"
        )


@dataclasses.dataclass
class _Played:
    """What a match's log says about its deals and seats."""

    names: tuple[str, ...]
    seed: str
    referee_match_id: str
    deals: dict[int, Deal]


def _played(read: LogRead) -> _Played:
    names: tuple[str, ...] = ()
    seed = ""
    deals: dict[int, Deal] = {}
    for line in read.lines:
        event = line.entry.event
        kind = event.WhichOneof("kind")
        if kind == "match_created":
            names = tuple(event.match_created.config.seat_names)
        elif kind == "hand_dealt":
            hands = {h.seat: tuple(sorted(h.cards)) for h in event.hand_dealt.hands}
            deals[event.hand_dealt.hand_number] = tuple(hands.get(s, ()) for s in range(4))
        elif kind == "match_ended":
            seed = event.match_ended.seed
    match_id = read.lines[0].entry.match_id if read.lines else ""
    return _Played(names, seed, match_id, deals)


def _results(path: Path, report: TournamentReport) -> list[MatchResult]:
    out: list[MatchResult] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        report.problems.append(f"cannot read {path}: {exc.strerror or exc}")
        return out
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(MatchResult.from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError) as exc:
            report.problems.append(f"results.jsonl line {number} cannot be read ({exc})")
    return out


def _schedule(state: dict[str, Any]) -> list[MatchSpec]:
    identity = state["identity"]
    remote = {b["name"] for b in identity["bots"] if b.get("kind") == "remote"}
    return plan(
        [tuple(t) for t in identity["tables"]],
        int(identity["rounds"]),
        Seatings(identity["seatings"]),
        str(state["master_seed"]),
        str(state["config_hash"]),
        remote=remote,
        unseen=identity.get("remote_deals") == "unseen",
        per_round=identity.get("deals") == "per-round",
    )


def verify_tournament(
    folder: Path, jobs: int = 1, public_key: bytes | None = None
) -> TournamentReport:
    """Check a tournament folder; never raises for a bad folder."""
    folder = Path(folder)
    report = TournamentReport(folder)
    try:
        state = json.loads((folder / "tournament.json").read_text(encoding="utf-8"))
        if identity_hash(state["identity"]) != state["config_hash"]:
            report.problems.append("tournament.json: the identity does not hash to config_hash")
        schedule = _schedule(state)
        identity = state["identity"]
        unseen_for = (
            {b["name"] for b in identity["bots"] if b.get("kind") == "remote"}
            if identity.get("remote_deals") == "unseen"
            else set()
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        report.problems.append(f"{folder / 'tournament.json'} cannot be read: {exc}")
        return report
    logs = sorted((folder / "logs").glob("*.jsonl"))
    report.logs = _verify_all(logs, jobs, public_key)
    _check_traces(logs, report)
    results = _results(folder / "results.jsonl", report)
    specs = {s.match_id: s for s in schedule}
    by_log = {str(Path(r.log)): r for r in results if r.log}
    for path in logs:
        if str(path.relative_to(folder)) not in by_log:
            report.problems.append(f"{path.name}: a log with no line in results.jsonl")
    played: dict[str, tuple[MatchSpec, _Played]] = {}
    seen_ids: set[str] = set()
    for r in results:
        if r.match_id in seen_ids:
            report.problems.append(f"{r.match_id}: recorded twice in results.jsonl")
        seen_ids.add(r.match_id)
        spec = specs.get(r.match_id)
        if spec is None:
            report.problems.append(f"{r.match_id}: not a match of this tournament's schedule")
            continue
        where = (r.index, r.group, r.round, r.table, r.seating, r.seed)
        if where != (spec.index, spec.group, spec.round, spec.table, spec.seating, spec.seed):
            report.problems.append(f"{r.match_id}: its results line is not its schedule entry")
        if not r.log:
            continue
        match = _check_match(folder / r.log, spec, r, report)
        if match is not None:
            played[r.match_id] = (spec, match)
    report.matches = len(played)
    _check_groups(played.values(), unseen_for, report)
    missing = len(schedule) - len(seen_ids & set(specs))
    if missing:
        report.notes.append(f"{missing} of {len(schedule)} scheduled matches not played yet")
    return report


def _check_traces(logs: list[Path], report: TournamentReport) -> None:
    """A model seat's trace beside its log is the record of what the model saw and said:
    each one found must match the hashes its (verified) log holds, as ``referee verify
    LOG`` checks it. A log whose traces are not there (a remote model's, self-reported)
    is not a failure."""
    for path, verified in zip(logs, report.logs, strict=True):
        if not verified.ok or not any(trace_path(path, s).exists() for s in range(SEATS)):
            continue
        for check in verify_traces(path):
            if check.problem is not None:
                report.problems.append(f"{path.name}: trace of seat {check.seat}: {check.problem}")
            elif check.path is not None:
                report.traces += 1


def _verify_all(logs: list[Path], jobs: int, key: bytes | None) -> list[VerifyReport]:
    keys = [key] * len(logs)
    if jobs <= 1 or len(logs) < 2:
        return [verify_log(p, key) for p in logs]
    with process_pool(min(jobs, len(logs))) as pool:
        return list(pool.map(verify_log, logs, keys, chunksize=4))


def _check_match(
    path: Path, spec: MatchSpec, result: MatchResult, report: TournamentReport
) -> _Played | None:
    name = result.match_id
    try:
        read = read_log(path)  # once, for both
        match = _played(read)
        summary = summarize_read(read, path)
    except (OSError, ValueError, LogFormatError) as exc:
        report.problems.append(f"{name}: its log {path} cannot be read: {exc}")
        return None
    if match.names != spec.bots:
        report.problems.append(
            f"{name}: seated {', '.join(match.names)}; the schedule says {', '.join(spec.bots)}"
        )
    if match.seed != spec.seed:
        report.problems.append(
            f"{name}: its log reveals seed {match.seed[:16]}…, the schedule's is {spec.seed[:16]}…"
        )
    if match.referee_match_id != result.referee_match_id:
        report.problems.append(f"{name}: its log is of match {match.referee_match_id}")
    for sr in result.seats:
        s = sr.summary.seat
        logged = summary.seats[s] if 0 <= s < len(summary.seats) else None
        if (
            logged is None
            or s >= len(match.names)
            or sr.bot != match.names[s]
            or (sr.summary.place, sr.summary.total, sr.summary.scores)
            != (logged.place, logged.total, logged.scores)
        ):
            report.problems.append(f"{name}: seat {s} in results.jsonl disagrees with its log")
    return match


def _check_groups(
    played: Iterable[tuple[MatchSpec, _Played]], unseen_for: set[str], report: TournamentReport
) -> None:
    """Same seed, same cards; every bot in every seat as often; remote bots' deals."""
    groups: dict[int, list[_Played]] = defaultdict(list)
    by_seed: dict[str, list[tuple[MatchSpec, _Played]]] = defaultdict(list)
    dealt: dict[str, Counter[str]] = defaultdict(Counter)
    for spec, match in played:
        groups[spec.group].append(match)
        by_seed[match.seed].append((spec, match))
        for name in set(match.names) & unseen_for:
            dealt[name][match.seed] += 1
    for name, seeds in sorted(dealt.items()):
        twice = sum(n > 1 for n in seeds.values())
        if twice:
            report.problems.append(
                f"remote bot {name} was dealt {twice} deal(s) more than once "
                '(remote_deals = "unseen")'
            )
    for seed, same in sorted(by_seed.items(), key=lambda kv: kv[1][0][0].index):
        if len(same) < 2:
            continue
        report.groups += 1
        first_spec, first = same[0]
        for spec, match in same[1:]:
            for number in sorted(set(first.deals) & set(match.deals)):
                if first.deals[number] != match.deals[number]:
                    report.problems.append(
                        f"{spec.match_id}: hand {number} was not dealt the cards of "
                        f"{first_spec.match_id}, though both have seed {seed[:16]}…"
                    )
                    break
    for group, members in sorted(groups.items()):
        if len(members) not in (4, 24):
            continue  # one match per group, or a group not played to its end
        want = len(members) // 4
        seats: dict[str, Counter[int]] = defaultdict(Counter)
        for match in members:
            for seat, name in enumerate(match.names):
                seats[name][seat] += 1
        for name, counts in sorted(seats.items()):
            if any(counts[s] != want for s in range(4)):
                report.problems.append(
                    f"group {group}: {name} did not hold every seat's cards {want} time(s)"
                )


__all__ = ["TournamentReport", "verify_tournament"]
