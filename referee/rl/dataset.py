"""``referee dataset``: training data from match logs, one row per decision.

Each log is read by the one log reader and verified (the hash chain, every decision
decided again, and the signature, against ``--public-key`` when given) before anything
of it is exported; a log that does not verify is named and left out. The rows come from
the same engine core as the environments (``referee.rl.game``): at each logged play or
pass, the acting seat's observation and mask as the observer allowed it then (its own
cards, the public plays: ``tests/rl/test_observation.py`` shows no other card gets in),
the action taken, its time, and when the hand ends, the hand's outcome for that seat.

Memory stays bounded over a folder of thousands of logs: one log is held at a time (at
most the log reader's ``MAX_LOG_BYTES``), rows wait for their hand's end, and are
written out in batches.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, TextIO

import numpy as np
import numpy.typing as npt

from pusoy_client.rl import NUM_ACTIONS, OBS_SIZE, PASS_ACTION
from referee.durations import format_duration
from referee.log.reader import EventVisitor, LogFormatError, LogLine, LogRead, read_log
from referee.log.signing import SigningKeyError, load_public_key, public_key_argument
from referee.log.verify import verify_loaded
from referee.match.settings import SettingsError, settings_from_config
from referee.protocol import common
from referee.protocol.names import DEFAULT_CAUSE
from referee.rl.game import Game
from referee.rules import RulesError, parse_cards
from referee.text import printable

BATCH_ROWS = 4096
FORMATS = ("parquet", "jsonl")
DATASET_VERSION = 1
"""Bumped when a column or the encoding changes (docs/rl.md)."""


class DatasetError(Exception):
    """A dataset that cannot be made at all (no logs, a bad key, an unwritable file)."""


@dataclasses.dataclass
class Summary:
    logs: int = 0
    """Logs exported."""
    rows: int = 0
    skipped: list[tuple[Path, str]] = dataclasses.field(default_factory=list)
    """Logs left out, and why."""


# -- finding the logs -------------------------------------------------------------------


def find_logs(sources: Sequence[Path]) -> tuple[list[Path], Path | None]:
    """The logs of files and folders (a tournament's folder: its ``logs/``), and the
    public key a tournament folder keeps (``signing-key.pub``), if any."""
    logs: list[Path] = []
    key_file: Path | None = None
    for source in sources:
        if source.is_dir():
            if (source / "tournament.json").is_file():
                if (source / "signing-key.pub").is_file():
                    key_file = source / "signing-key.pub"
                source = source / "logs"
            logs += sorted(p for p in source.glob("*.jsonl") if p.is_file())
        elif source.is_file():
            logs.append(source)
        else:
            raise DatasetError(f"{source}: no such file or folder")
    return logs, key_file


# -- rows of one log --------------------------------------------------------------------

Row = dict[str, Any]


def log_rows(read: LogRead, *, full_information: bool = False) -> Iterator[Row]:
    """The rows of a verified log, in order (a hand's rows once the hand has ended)."""
    rows = LogRows(read, full_information=full_information)
    for line in read.lines:
        rows.visit(line)
        yield from rows.done()
    rows.ended = rows.pending  # a hand the match's end cut short (cancelled): no outcome
    yield from rows.done()


class LogRows(EventVisitor):
    """A log visitor that makes a row at each play or pass, from the engine core the
    environments share (``referee.rl.game``), and hands a hand's rows over (``done``)
    once the hand's outcome is known."""

    def __init__(self, read: LogRead, *, full_information: bool = False) -> None:
        self.log = read.path.name
        self.match_id = read.lines[0].entry.match_id if read.lines else ""
        self.full_information = full_information
        self.game: Game | None = None
        self.names: list[str] = []
        self.bots = ["", "", "", ""]
        self.hand_number = 0
        self.pending: list[Row] = []
        self.ended: list[Row] = []

    def done(self) -> list[Row]:
        """The rows whose hand has ended since the last call."""
        ended, self.ended = self.ended, []
        return ended

    def match_created(self, line: LogLine, body: common.MatchCreated) -> None:
        settings = settings_from_config(body.config)
        self.game = Game(settings.rules, auto_deal=False)
        self.game.reset("")
        self.names = list(settings.seat_names)

    def seat_connected(self, line: LogLine, body: common.SeatConnected) -> None:
        if self.game is not None and 0 <= body.seat < 4:
            self.bots[body.seat] = body.bot_name

    def hand_dealt(self, line: LogLine, body: common.HandDealt) -> None:
        if self.game is None:
            return
        hands = [0, 0, 0, 0]
        for h in body.hands:
            hands[h.seat] = parse_cards(list(h.cards))
        self.game.start_hand(hands)
        self.hand_number = body.hand_number
        self.pending = []

    def move(
        self, line: LogLine, body: common.Played | common.Passed, cards: Sequence[str] | None
    ) -> None:
        game = self.game
        if game is None:
            return
        seat = body.seat
        mask = parse_cards(list(cards)) if cards is not None else 0
        action = game.dealt[seat].action_of(mask)
        row: Row = {
            "match_id": self.match_id,
            "log": self.log,
            "hand": self.hand_number,
            "seat": seat,
            "bot": self.names[seat] if seat < len(self.names) else "",
            "bot_name": self.bots[seat],
            "turn": body.turn_id,
            "observation": game.observe(seat),
            "action_mask": game.action_mask(),
            "action": action,
            "cards": " ".join(game.dealt[seat].text_of(action)),
            "default_cause": DEFAULT_CAUSE.names.get(body.default_cause, ""),
            "elapsed_ms": body.elapsed_ms,
            "hand_score": None,
            "reward": None,
            "hand_won": None,
        }
        if self.full_information and game.hand is not None:
            row["hands"] = list(game.hand.hands)
        self.pending.append(row)
        game.play(seat, mask)

    def hand_ended(self, line: LogLine, body: common.HandEnded) -> None:
        if self.game is None:
            return
        for row in self.pending:
            score = body.scores[row["seat"]]
            row["hand_score"] = score
            row["reward"] = float(self.game.sign * score)
            row["hand_won"] = body.winner == row["seat"]
        self.ended, self.pending = self.pending, []


# -- writers ----------------------------------------------------------------------------


class _JsonLines:
    def __init__(self, path: Path) -> None:
        self.out: IO[str] = open(path, "w", encoding="utf-8")  # noqa: SIM115

    def write(self, rows: list[Row]) -> None:
        for row in rows:
            data = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in row.items()}
            self.out.write(json.dumps(data, separators=(",", ":")) + "\n")

    def close(self) -> None:
        self.out.close()


class _Parquet:
    def __init__(self, path: Path, full_information: bool) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.pa = pa
        fields = [
            pa.field("match_id", pa.string()),
            pa.field("log", pa.string()),
            pa.field("hand", pa.int32()),
            pa.field("seat", pa.int8()),
            pa.field("bot", pa.string()),
            pa.field("bot_name", pa.string()),
            pa.field("turn", pa.int64()),
            pa.field("observation", pa.list_(pa.int8(), OBS_SIZE)),
            pa.field("action_mask", pa.list_(pa.int8(), NUM_ACTIONS)),
            pa.field("action", pa.int16()),
            pa.field("cards", pa.string()),
            pa.field("default_cause", pa.string()),
            pa.field("elapsed_ms", pa.int32()),
            pa.field("hand_score", pa.int32()),
            pa.field("reward", pa.float32()),
            pa.field("hand_won", pa.bool_()),
        ]
        if full_information:
            fields.append(pa.field("hands", pa.list_(pa.uint64(), 4)))
        metadata = {
            "pusoy.dataset_version": str(DATASET_VERSION),
            "pusoy.observation_size": str(OBS_SIZE),
            "pusoy.actions": str(NUM_ACTIONS),
            "pusoy.pass_action": str(PASS_ACTION),
        }
        self.schema = pa.schema(fields, metadata=metadata)
        self.writer = pq.ParquetWriter(str(path), self.schema, compression="zstd")

    def write(self, rows: list[Row]) -> None:
        pa = self.pa
        columns: list[Any] = []
        for field in self.schema:
            name = field.name
            if name in ("observation", "action_mask"):
                width = field.type.list_size
                flat: npt.NDArray[np.int8] = np.concatenate([r[name] for r in rows])
                columns.append(pa.FixedSizeListArray.from_arrays(pa.array(flat), width))
            else:
                columns.append(pa.array([r.get(name) for r in rows], type=field.type))
        self.writer.write_batch(pa.RecordBatch.from_arrays(columns, schema=self.schema))

    def close(self) -> None:
        self.writer.close()


# -- progress ---------------------------------------------------------------------------


class DatasetProgress:
    """A bar rewritten in place on a terminal; a line per tenth of the logs otherwise."""

    def __init__(self, out: TextIO, total: int) -> None:
        self.out = out
        self.total = total
        self.tty = out.isatty()
        self.started = time.monotonic()
        self._last = 0.0
        self._tenth = 0

    def update(self, done: int, rows: int, final: bool = False) -> None:
        now = time.monotonic()
        elapsed = now - self.started
        share = done / self.total if self.total else 1.0
        text = f"{done}/{self.total} logs | {rows:,} rows | {format_duration(elapsed)}"
        if done and not final:
            text += f" | ETA {format_duration(elapsed / done * (self.total - done))}"
        if self.tty:
            if final or now - self._last >= 0.1:
                filled = int(share * 24)
                bar = "#" * filled + "." * (24 - filled)
                self.out.write(f"\r[{bar}] {text}\x1b[K" + ("\n" if final else ""))
                self.out.flush()
                self._last = now
        elif final or (done < self.total and int(share * 10) > self._tenth):
            self._tenth = int(share * 10)
            self.out.write(text + "\n")
            self.out.flush()


# -- the export -------------------------------------------------------------------------


def export(
    sources: Sequence[Path],
    output: Path,
    *,
    fmt: str | None = None,
    full_information: bool = False,
    public_key: str | bytes | None = None,
    progress: TextIO | None = sys.stderr,
    notes: TextIO = sys.stderr,
) -> Summary:
    """Write the decisions of every log of ``sources`` to ``output`` (Parquet, or JSON
    lines for a ``.jsonl`` name or ``fmt="jsonl"``)."""
    fmt = fmt or ("jsonl" if output.suffix in (".jsonl", ".json", ".ndjson") else "parquet")
    if fmt not in FORMATS:
        raise DatasetError(f"unknown format {fmt!r}: {' or '.join(FORMATS)}")
    logs, key_file = find_logs(sources)
    if not logs:
        raise DatasetError("no logs (.jsonl files) found in " + ", ".join(map(str, sources)))
    key = _key(public_key, key_file)
    writer: _JsonLines | _Parquet
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        writer = _JsonLines(output) if fmt == "jsonl" else _Parquet(output, full_information)
    except OSError as exc:
        raise DatasetError(f"cannot write {output}: {exc.strerror or exc}") from None
    summary = Summary()
    bar = DatasetProgress(progress, len(logs)) if progress is not None else None
    batch: list[Row] = []
    try:
        for i, path in enumerate(logs):
            problem = _export_log(path, key, full_information, batch, writer, summary)
            if problem is not None:
                summary.skipped.append((path, problem))
                notes.write(printable(f"left out: {path}: {problem}") + "\n")
            if bar is not None:
                bar.update(i + 1, summary.rows + len(batch))
        if batch:
            writer.write(batch)
            summary.rows += len(batch)
    finally:
        writer.close()
    if bar is not None:
        bar.update(len(logs), summary.rows, final=True)
    return summary


def _key(given: str | bytes | None, key_file: Path | None) -> bytes | None:
    try:
        if isinstance(given, bytes):
            return given
        if given:
            return public_key_argument(given)
        if key_file is not None:
            return load_public_key(key_file)
    except SigningKeyError as exc:
        raise DatasetError(str(exc)) from None
    return None


def _export_log(
    path: Path,
    key: bytes | None,
    full_information: bool,
    batch: list[Row],
    writer: _JsonLines | _Parquet,
    summary: Summary,
) -> str | None:
    """Verify one log and add its rows; the reason it was left out, or None."""
    try:
        read = read_log(path)
    except LogFormatError as exc:
        return f"not a log: {exc}"
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    report = verify_loaded(read, key)
    if not report.ok:
        return report.summary().removeprefix("FAILED: ").removeprefix(f"{path}: ")
    rows: list[Row] = []
    try:
        rows.extend(log_rows(read, full_information=full_information))
    except (SettingsError, RulesError, ValueError) as exc:  # verified: not expected
        return f"cannot be replayed: {exc}"
    summary.logs += 1
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH_ROWS:
            writer.write(batch)
            summary.rows += len(batch)
            batch.clear()
    return None


def run(
    sources: Sequence[str],
    output: str,
    *,
    fmt: str | None,
    full_information: bool,
    public_key: str | None,
    progress: bool,
) -> int:
    """``referee dataset``: 0 when every log was exported, 1 when some were left out, 2
    when nothing could be done."""
    try:
        summary = export(
            [Path(s) for s in sources],
            Path(output),
            fmt=fmt,
            full_information=full_information,
            public_key=public_key,
            progress=sys.stderr if progress else None,
        )
    except DatasetError as exc:
        print(f"referee dataset: {printable(str(exc))}", file=sys.stderr)
        return 2
    left = f", {len(summary.skipped)} left out" if summary.skipped else ""
    print(printable(f"{output}: {summary.rows} rows from {summary.logs} logs{left}"))
    return 1 if summary.skipped else 0
