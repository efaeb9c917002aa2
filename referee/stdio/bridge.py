"""The stdio bridge: a gRPC bot on one side, a bot process speaking JSON lines on the other.

``referee stdio-bot -- COMMAND...`` starts COMMAND, takes the seat of PUSOY_TOKEN (or
``--token``) at the referee of PUSOY_ADDRESS (or ``--address``), and relays: every
message of the Play stream becomes one line on the bot's stdin (``lines.encode``), every
line the bot writes on stdout becomes one Action (``lines.parse_answer``). The referee
judges every action and runs every clock, exactly as for a gRPC bot; the bridge only
bounds what a misbehaving bot can make it hold:

- the stream task reads the referee's messages and queues each as a line for the bot. It
  never waits on the bot, so a bot that stops reading cannot stall the seat's stream;
- the writer task feeds the queued lines to the bot's stdin. When more than
  ``max_pending_bytes`` wait unread, the bot is taken for hung: it is stopped, the seat
  is left (its turns then get the referee's default actions) and the bridge exits 4;
- the reader task cuts the bot's stdout into lines of at most ``max_line_bytes``, in
  fixed-size chunks, and sends each answer before reading on. A flooding bot is slowed to
  the pace of the stream and judged by the referee (out-of-turn actions are bounded by
  the fault policy); an over-long line is one malformed action, and the rest of it is
  read and dropped.

Exit status: 0 the match ended, 2 the referee refused the seat, 3 the referee could not
be reached, 4 the bot stopped reading, 5 the bot exited or closed its stdout before the
match ended, 127 the bot could not be started. Diagnostics go to stderr, which the bot
shares, so a seat's stderr file holds both.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import enum
import os
import resource
import shlex
import signal
import sys
from collections.abc import Sequence
from typing import TextIO

import grpc

from referee.client.seat import RECONNECT_WINDOW_S, SeatClient, SeatPlayer, SeatRefused
from referee.client.tls import ClientTls
from referee.protocol import play_service
from referee.stdio import program_name
from referee.stdio.lines import Answer, Owed, encode, parse_answer

READ_CHUNK = 65536


class Exit(enum.IntEnum):
    """The bridge's exit status."""

    MATCH_OVER = 0
    REFUSED = 2
    UNREACHABLE = 3
    STOPPED_READING = 4
    BOT_ENDED = 5
    CANNOT_START = 127


@dataclasses.dataclass(frozen=True, slots=True)
class BridgeLimits:
    max_line_bytes: int = 4096
    """The longest answer line; a longer one is a malformed action."""
    max_pending_bytes: int = 1 << 20
    """Lines for the bot not yet taken by it; past this the bot is stopped."""
    exit_grace_s: float = 3.0
    """After the end (its stdin closed), how long the bot has to exit before it is killed."""
    reconnect_window_s: float = RECONNECT_WINDOW_S
    """Give up after this long without a word from the referee."""
    max_notes: int = 50
    """Diagnostic lines written to stderr; later ones are only counted."""


@dataclasses.dataclass
class BridgeCounts:
    lines_to_bot: int = 0
    lines_from_bot: int = 0
    malformed: int = 0
    overlong: int = 0
    dropped: int = 0
    """Answers not sent: read while no stream was open, or answering a turn that ended
    with a lost stream."""
    reconnects: int = 0


class StdioBridge(SeatPlayer):
    """Plays one seat with one bot process; ``await run()`` returns the exit status.

    The seat is held by the seat client (``referee.client.seat``: its reconnects,
    backoff and refusals); the bridge is its player, relaying every message to the bot."""

    def __init__(
        self,
        command: Sequence[str],
        address: str,
        token: str,
        *,
        name: str = "",
        want_legal_plays: bool = True,
        limits: BridgeLimits = BridgeLimits(),
        stderr: TextIO | None = None,
        tls: ClientTls | None = None,
    ) -> None:
        if not command:
            raise ValueError("no bot command")
        self.command = list(command)
        self.address = address
        self.name = name or program_name(command)
        self.limits = limits
        self.seat_client = SeatClient(
            address,
            token,
            tls=tls,  # None: plaintext
            name=self.name,
            want_legal_plays=want_legal_plays,
            reconnect_window_s=limits.reconnect_window_s,
        )
        self.stderr = stderr or sys.stderr
        self.counts = BridgeCounts()
        self.owed = Owed()
        self.seat = -1
        self.ended = False
        """The match is over (seen from this seat)."""
        self._pending: collections.deque[bytes] = collections.deque()
        self._pending_bytes = 0
        self._wake = asyncio.Event()
        self._flush_and_close = False
        self._overflow = asyncio.Event()
        self._notes = 0
        self._proc: asyncio.subprocess.Process | None = None

    # -- diagnostics --------------------------------------------------------------

    def note(self, message: str, *, always: bool = False) -> None:
        """A diagnostic line on stderr; past ``max_notes`` only those marked ``always``."""
        if always:
            with contextlib.suppress(OSError, ValueError):
                print(f"stdio-bot {self.name}: {message}", file=self.stderr, flush=True)
            return
        self._notes += 1
        if self._notes <= self.limits.max_notes:
            text = f"stdio-bot {self.name}: {message}"
        elif self._notes == self.limits.max_notes + 1:
            text = f"stdio-bot {self.name}: more notes left out (see the counts at the end)"
        else:
            return
        with contextlib.suppress(OSError, ValueError):
            print(text, file=self.stderr, flush=True)

    def _final_note(self, code: Exit) -> None:
        c = self.counts
        usage = resource.getrusage(resource.RUSAGE_SELF)
        text = (
            f"stdio-bot {self.name}: exit {int(code)} ({code.name.lower().replace('_', ' ')}); "
            f"{c.lines_to_bot} lines to the bot, {c.lines_from_bot} from it "
            f"({c.malformed} malformed, {c.overlong} over {self.limits.max_line_bytes} bytes, "
            f"{c.dropped} dropped), {c.reconnects} reconnects; "
            f"bridge CPU {usage.ru_utime + usage.ru_stime:.2f} s"
        )
        with contextlib.suppress(OSError, ValueError):
            print(text, file=self.stderr, flush=True)

    # -- the whole run ------------------------------------------------------------

    async def run(self) -> Exit:
        env = {k: v for k, v in os.environ.items() if k != "PUSOY_TOKEN"}
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=env,
            )
        except OSError as exc:
            self.note(
                f"cannot start {shlex.join(self.command)}: {exc.strerror or exc}", always=True
            )
            self._final_note(Exit.CANNOT_START)
            return Exit.CANNOT_START
        self._proc = proc
        stream = asyncio.create_task(self._stream(), name="stdio stream")
        writer = asyncio.create_task(self._write_lines(proc), name="stdio writer")
        reader = asyncio.create_task(self._read_answers(proc), name="stdio reader")
        overflow = asyncio.create_task(self._overflow.wait())
        exited = asyncio.create_task(proc.wait())
        code = Exit.BOT_ENDED
        try:
            await asyncio.wait(
                {stream, reader, overflow, exited}, return_when=asyncio.FIRST_COMPLETED
            )
            if stream.done():
                code = stream.result()
                # Let the bot read what is left (match_ended, a refusal), then EOF.
                self._flush_and_close = True
                self._wake.set()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(writer), self.limits.exit_grace_s)
            elif self.ended:
                code = Exit.MATCH_OVER
            elif overflow.done():
                code = Exit.STOPPED_READING
                self.note(
                    f"the bot has not read its input: over {self.limits.max_pending_bytes} "
                    "bytes wait; it is stopped and leaves the seat",
                    always=True,
                )
            else:
                code = Exit.BOT_ENDED
                status = await _status_soon(proc)
                what = "closed its stdout" if status is None else _describe_exit(status)
                self.note(f"the bot {what} before the match ended; it leaves the seat", always=True)
        finally:
            stream.cancel()  # leaves the seat, unless the match is over already
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await stream
            await self._stop_bot(proc, graceful=code in (Exit.MATCH_OVER, Exit.REFUSED))
            for task in (writer, reader, overflow, exited):
                task.cancel()
            await asyncio.gather(writer, reader, overflow, exited, return_exceptions=True)
        self._final_note(code)
        return code

    async def _stop_bot(self, proc: asyncio.subprocess.Process, *, graceful: bool) -> None:
        """Close the bot's stdin; give it the grace to exit when it did nothing wrong."""
        if proc.stdin is not None:
            with contextlib.suppress(OSError, RuntimeError):
                proc.stdin.close()
        if graceful and proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), self.limits.exit_grace_s)
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 5.0)

    # -- referee -> bot -----------------------------------------------------------

    async def _stream(self) -> Exit:
        """Hold the seat until the match ends (the seat client reconnects)."""
        try:
            outcome = await self.seat_client.play(self)
        except SeatRefused as exc:
            self._forward(play_service.PlayResponse(refusal=exc.refusal))
            self.note(f"the referee refused the seat: {exc}", always=True)
            return Exit.REFUSED
        except ConnectionError as exc:
            self.note(str(exc), always=True)
            return Exit.UNREACHABLE
        except grpc.aio.AioRpcError as exc:
            self.note(f"the referee at {self.address} failed: {exc.details()}", always=True)
            return Exit.UNREACHABLE
        finally:
            self.counts.reconnects = self.seat_client.reconnects
        if outcome.refusal is not None:  # MATCH_OVER: it ended while this seat was away
            self.ended = True
            self._forward(play_service.PlayResponse(refusal=outcome.refusal))
        return Exit.MATCH_OVER

    def stream_opened(self) -> None:
        self.owed.new_stream()

    async def on_message(self, seat: SeatClient, message: play_service.PlayResponse) -> None:
        kind = message.WhichOneof("kind")
        if kind == "welcome":
            self.seat = message.welcome.seat
        elif kind == "prompt":
            self.owed.prompted(message.prompt.turn_id)
        elif kind == "result":
            result = message.result
            self.owed.judged(
                result.turn_id, accepted=result.accepted, attempts_left=result.attempts_left
            )
        elif kind == "event" and message.event.HasField("match_ended"):
            self.ended = True  # before the bot can read it and exit
        self._forward(message)

    def _forward(self, msg: play_service.PlayResponse) -> None:
        """Queue a line for the bot; never waits."""
        if self._overflow.is_set():
            return
        line = encode(msg)
        if self._pending_bytes + len(line) > self.limits.max_pending_bytes:
            self._overflow.set()
            return
        self._pending.append(line)
        self._pending_bytes += len(line)
        self.counts.lines_to_bot += 1
        self._wake.set()

    async def _write_lines(self, proc: asyncio.subprocess.Process) -> None:
        stdin = proc.stdin
        assert stdin is not None
        # Hold nothing in the transport beyond what is being written, so that the lines
        # counted as pending are all the bot has not taken, but for the OS pipe's buffer.
        stdin.transport.set_write_buffer_limits(high=0)
        while True:
            if not self._pending:
                if self._flush_and_close:
                    return
                self._wake.clear()
                await self._wake.wait()
                continue
            data = b"".join(self._pending)
            self._pending.clear()
            try:
                stdin.write(data)
                await stdin.drain()
            except (BrokenPipeError, ConnectionResetError):
                return  # the bot is gone; the reader and the exit watcher tell
            self._pending_bytes -= len(data)

    # -- bot -> referee -----------------------------------------------------------

    async def _read_answers(self, proc: asyncio.subprocess.Process) -> None:
        """Cut stdout into bounded lines and answer with each; returns at EOF."""
        out = proc.stdout
        assert out is not None
        limit = self.limits.max_line_bytes
        line = bytearray()
        skipping = False  # the rest of an over-long line, already answered
        while True:
            chunk = await out.read(READ_CHUNK)
            if not chunk:
                if line and not skipping:
                    await self._answer(bytes(line))  # a last line without its newline
                return
            start = 0
            while start < len(chunk):
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                start = len(chunk) if end < 0 else end + 1
                if not skipping:
                    line += piece
                    if len(line) > limit:
                        line.clear()
                        skipping = True
                        await self._answer_overlong()
                    elif end >= 0:
                        await self._answer(bytes(line))
                        line.clear()
                if end >= 0:
                    skipping = False

    async def _answer_overlong(self) -> None:
        self.counts.overlong += 1
        await self._answer_with(Answer(cards=None, malformed="over-long"))

    async def _answer(self, raw: bytes) -> None:
        await self._answer_with(parse_answer(raw))

    async def _answer_with(self, answer: Answer) -> None:
        """Send one line's answer for the turn it answers, unless that cannot count."""
        self.counts.lines_from_bot += 1
        where = f"line {self.counts.lines_from_bot}"
        if answer.turn_id:
            self.owed.answered(answer.turn_id)
            turn = answer.turn_id
        else:
            turn = self.owed.take()  # also for an answer that is dropped, to stay in step
        if turn < 0:
            self.counts.dropped += 1
            self.note(f"{where} dropped: turn {-turn} ended with the stream it was prompted on")
            return
        if not self.seat_client.connected:
            self.counts.dropped += 1
            self.note(f"{where} (turn {turn}) dropped: no stream to the referee right now")
            return
        if answer.malformed == "over-long":
            self.note(
                f"{where}: longer than {self.limits.max_line_bytes} bytes; sent as a "
                f"malformed action for turn {turn}, the rest of the line dropped"
            )
        elif answer.malformed:
            self.counts.malformed += 1
            self.note(f"{where}: {answer.malformed}; sent as a malformed action for turn {turn}")
        self.owed.sent(turn)  # before the write: its result cannot come before this
        await self._send(answer.action(turn))

    async def _send(self, action: play_service.Action) -> None:
        if not await self.seat_client.send(action):
            self.counts.dropped += 1  # the stream ended meanwhile; the seat client reconnects


async def _status_soon(proc: asyncio.subprocess.Process) -> int | None:
    """The bot's exit status if it exits within a moment (it may only have closed stdout)."""
    with contextlib.suppress(TimeoutError):
        return await asyncio.wait_for(proc.wait(), 0.5)
    return None


def _describe_exit(status: int) -> str:
    if status < 0:
        try:
            return f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"was killed by signal {-status}"
    return f"exited with status {status}"


async def run_bridge(bridge: StdioBridge) -> Exit:
    """Run the bridge until the match ends; SIGTERM stops the bot and leaves the seat."""
    task = asyncio.ensure_future(bridge.run())
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await task
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGTERM)


__all__ = ["BridgeCounts", "BridgeLimits", "Exit", "StdioBridge", "run_bridge"]
