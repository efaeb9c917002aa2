"""The local backend: each match at a table in this process, around one referee.

The referee is in this process (``LocalReferee``) or a running ``referee serve``
(``ServerReferee``); whoever makes the backend starts and stops it, because a tournament
needs it beyond playing (its lobby for remote bots, its metrics) and for as long as it
runs. The same holds for the sandboxes of the spawned bots (``sandbox``: the started
``TableJails`` of a job, such as a tournament's ``Isolation`` for every job, or a ladder's
jails for the folders of the job's versions), bound to the referee's address.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from referee.client.tls import ClientTls
from referee.sandbox import TableJails
from referee.table.procs import ProcessLedger
from referee.table.referees import Referee
from referee.table.table import BOT_EXIT_GRACE_S, MatchReport, Table
from referee.tournament.backends.base import (
    MatchBackend,
    MatchJob,
    OnBotExit,
    OnCreated,
    Playing,
)


class LocalBackend(MatchBackend):
    """Plays matches at tables here, at most ``concurrency`` at once, at ``referee``.

    ``sandbox(job)``: the jails of the job's spawned bots (None: bare); ``ledger``
    keeps the spawned bots' process groups (so that a killed run's bots can be stopped
    by the next); ``tls``: how the seated bots reach a referee that serves TLS."""

    def __init__(
        self,
        referee: Referee,
        *,
        concurrency: int,
        verify: bool = True,
        sandbox: Callable[[MatchJob], TableJails | None] | None = None,
        ledger: ProcessLedger | None = None,
        tls: ClientTls | None = None,
        on_bot_exit: OnBotExit | None = None,
        on_created: OnCreated | None = None,
    ) -> None:
        super().__init__(concurrency=concurrency, verify=verify, on_bot_exit=on_bot_exit)
        self.referee = referee
        self.sandbox = sandbox
        self.ledger = ledger
        self.tls = tls
        self.on_created = on_created

    @property
    def public_key(self) -> str:
        return self.referee.public_key

    async def _attempt(self, playing: Playing) -> MatchReport:
        job = playing.job
        table = Table(
            self.referee,
            on_exit=functools.partial(self.on_bot_exit, job) if self.on_bot_exit else None,
            on_created=functools.partial(self.on_created, job) if self.on_created else None,
            ledger=self.ledger,
            exit_grace_s=BOT_EXIT_GRACE_S,
            tls=self.tls,
            sandbox=self.sandbox(job) if self.sandbox is not None else None,
        )
        try:
            return await table.play(
                job.settings,
                job.seats,
                label=job.label,
                log_path=lambda _: job.log_path,
                stderr_path=lambda _, seat, name: job.output_path(seat, name),
                time_limit_s=job.time_limit_s,
            )
        finally:
            playing.referee_match_id = table.match_id


__all__ = ["LocalBackend"]
