"""All matches of one server: create, find by id or token, cancel, shut down."""

from __future__ import annotations

import asyncio
import collections
import re
import secrets
import time
from pathlib import Path

from referee.protocol import common, match_service
from referee.server.runner import CancelCmd, MatchRunner
from referee.server.settings import MatchSettings


class ShuttingDown(Exception):
    """The server accepts no new match."""


class LogUnavailable(Exception):
    """The match's event log cannot be created; without its log a match does not start."""


# A server that runs for months keeps this many finished matches in memory; older ones
# are forgotten (their logs stay on disk and GetMatchLog still serves them).
DEFAULT_KEEP_FINISHED = 1000
MATCH_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{8}")


class MatchRegistry:
    def __init__(self, log_dir: Path, keep_finished: int = DEFAULT_KEEP_FINISHED) -> None:
        self.log_dir = log_dir
        self.keep_finished = keep_finished
        self.matches: dict[str, MatchRunner] = {}
        self.by_token: dict[str, tuple[MatchRunner, int]] = {}
        self.accepting = True
        self._finished: collections.deque[str] = collections.deque()

    def create(self, settings: MatchSettings) -> MatchRunner:
        if not self.accepting:
            raise ShuttingDown("the server is shutting down")
        match_id = time.strftime("%Y%m%d-%H%M%S-", time.gmtime()) + secrets.token_hex(4)
        runner = MatchRunner(match_id, settings, self.log_dir)
        try:
            runner.start()
        except OSError as exc:
            raise LogUnavailable(f"cannot create the match log {runner.log_path}: {exc}") from exc
        self.matches[match_id] = runner
        for seat, token in enumerate(runner.tokens):
            self.by_token[token] = (runner, seat)
        assert runner.task is not None
        runner.task.add_done_callback(lambda _: self._on_over(match_id))
        return runner

    def _on_over(self, match_id: str) -> None:
        self._finished.append(match_id)
        while len(self._finished) > self.keep_finished:
            self.forget(self._finished.popleft())

    def logged(self, match_id: str) -> Path | None:
        """The log of a match this server played, even if it has forgotten the match."""
        if not MATCH_ID.fullmatch(match_id):
            return None  # never a path built from arbitrary text
        path = self.log_dir / f"{match_id}.jsonl"
        return path if path.is_file() else None

    def get(self, match_id: str) -> MatchRunner | None:
        return self.matches.get(match_id)

    def seat_for(self, token: str) -> tuple[MatchRunner, int] | None:
        return self.by_token.get(token)

    def info(self, runner: MatchRunner) -> match_service.MatchInfo:
        m = runner.match
        return match_service.MatchInfo(
            match_id=runner.match_id,
            status=runner.status,
            config=runner.settings.config_pb(),
            connected=[slot.session is not None for slot in runner.seats],
            hands_played=m.hand_number,
            totals=list(m.totals),
            standings=runner.standings,
            log_path=str(runner.log_path),
            seed_commitment=runner.commitment,
        )

    def list(
        self, status: common.MatchStatus.ValueType = common.MATCH_STATUS_UNSPECIFIED
    ) -> list[match_service.MatchInfo]:
        runners = sorted(self.matches.values(), key=lambda r: r.created, reverse=True)
        return [self.info(r) for r in runners if not status or r.status == status]

    def forget(self, match_id: str) -> None:
        """Drop a match that is over from memory (its log stays on disk), so that a server
        that plays thousands of matches does not keep them all; later look-ups miss."""
        runner = self.matches.get(match_id)
        if runner is None or not runner.is_over():
            return
        del self.matches[match_id]
        for token in runner.tokens:
            self.by_token.pop(token, None)

    def cancel(self, runner: MatchRunner, reason: str) -> None:
        runner.submit(CancelCmd(reason or "cancelled by the organiser"))

    async def shutdown(self, reason: str = "server shutting down") -> None:
        """Stop taking matches, cancel the running ones, wait for their logs to close."""
        self.accepting = False
        running = [r for r in self.matches.values() if not r.is_over()]
        for runner in running:
            runner.submit(CancelCmd(reason))
        if running:
            await asyncio.gather(*(r.done.wait() for r in running))
