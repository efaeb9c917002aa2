"""The open-file limit a referee needs, and raising it at start.

Each live match holds about five descriptors: its four bots' connections and its log
(spectators and web viewers hold one each). Most systems start a process with a soft
limit of 1,024 and a much higher hard limit, so that ``referee serve`` with
``--max-live-matches 1000`` would run out at about 200 matches: new bots' connections
fail in gRPC and new match logs cannot be created. ``referee serve`` raises its soft
limit to the hard one at start (as Go programs do), and warns when even that is short
of what its limits allow. It also caps the gRPC connections it holds at once
(``connection_budget``), so that a flood of connections, silent or not, can never take
the descriptors its live matches' logs need: new logs are created, and written, while the
flood lasts.
"""

from __future__ import annotations

import resource

from referee.server.limits import ServerLimits

FDS_PER_LIVE_MATCH = 5
"""Four bot connections and the match's log."""
FDS_BASE = 64
"""The listeners, the state files, gRPC's and Python's own (epoll, wake-up pipes...)."""
MIN_CONNECTIONS = 16
"""The cap on connections never goes below this, whatever the open-file limit."""
NR_OPEN_FALLBACK = 1 << 20
"""Linux's default cap on a soft limit (fs.nr_open) when the hard limit is unlimited."""


def open_files_needed(limits: ServerLimits, extra: int = 0) -> int:
    """Descriptors for every match, bot and spectator the limits allow at once (0: none
    when the live-match count is unlimited), plus ``extra`` (web viewers)."""
    if not limits.max_live_matches:
        return 0
    return FDS_BASE + FDS_PER_LIVE_MATCH * limits.max_live_matches + limits.max_spectators + extra


def raise_open_files_limit() -> tuple[int, int]:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit; (soft, hard) after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = NR_OPEN_FALLBACK if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):  # above fs.nr_open: keep what we have
            return soft, hard
        soft = target
    return soft, hard


def open_files_warning(limits: ServerLimits, extra: int = 0) -> str | None:
    """Raise the limit; a warning for people when it is still short of the limits."""
    soft, _ = raise_open_files_limit()
    needed = open_files_needed(limits, extra)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return None
    return (
        f"the open-file limit is {soft}, but --max-live-matches {limits.max_live_matches} "
        f"needs about {needed} ({FDS_PER_LIVE_MATCH} per match: four bots and the log): "
        f"past about {max(0, (soft - FDS_BASE) // FDS_PER_LIVE_MATCH)} matches, bots cannot "
        "connect and new matches are refused. Raise the hard limit (ulimit -Hn, LimitNOFILE= "
        "in a systemd unit, --ulimit nofile= for docker) or lower --max-live-matches"
    )


def connection_budget(limits: ServerLimits, extra: int = 0, soft: int | None = None) -> int:
    """How many gRPC connections the bots' listener may hold at once: the open-file
    limit (``soft``, else this process's) less the base, ``extra`` (the web front's, the
    metrics endpoint's and the organiser listener's connections) and a descriptor in
    reserve for the log of each live match that fits in what is left (each needs its
    four bots' connections besides). 0: no cap, for an unlimited open-file limit.

    >>> connection_budget(ServerLimits(), soft=1024)  # room for 192 matches' logs
    768
    >>> connection_budget(ServerLimits(max_live_matches=100), extra=256, soft=1024)
    604
    """
    if soft is None:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 0
    room = soft - FDS_BASE - extra
    logs = max(0, room) // FDS_PER_LIVE_MATCH
    if limits.max_live_matches:
        logs = min(logs, limits.max_live_matches)
    return max(MIN_CONNECTIONS, room - logs)
