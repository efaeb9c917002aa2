"""``referee llm-bot SETTINGS``: a model plays a seat of a remote ``referee serve``.

For someone who runs their own model against someone else's referee: it takes a seat
the way ``referee bot`` does (the same address, token file or ``PUSOY_TOKEN``, TLS
settings and exit codes: docs/kits.md, section 7) and plays it as the house's model seat
does, writing its trace in ``--trace-dir`` as ``MATCH.seatN.trace.ndjson``. Its actions
carry their trace lines' hashes, so the referee's signed log binds the trace; but the
trace is the player's own account of what its model saw and said (self-reported: the
referee never saw the model), which ``referee verify LOG --trace N=FILE`` can check is
unchanged since the match, not that it is true.
"""

from __future__ import annotations

import os
from pathlib import Path

from referee.bots.player import play_seat
from referee.bots.process import BotSettings, outcome_line, run_seat
from referee.client.seat import SEAT_CHANNEL_OPTIONS, SeatOutcome
from referee.llm.player import ModelPlayer
from referee.llm.settings import ModelSettings
from referee.llm.trace import TraceWriter
from referee.log.traces import trace_path


def run_model_bot(model: ModelSettings, bot: BotSettings, trace_dir: Path) -> tuple[int, str]:
    """Play the seat until its match ends: the exit code and the line to print."""
    trace_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    trace = TraceWriter(trace_dir / f".playing-{os.getpid()}.trace.ndjson")

    def done(outcome: SeatOutcome) -> str:
        final = trace_path(trace_dir / f"{outcome.match_id}.jsonl", outcome.seat)
        os.replace(trace.path, final)
        return f"{outcome_line(model.name, outcome)}; trace: {final}"

    seat = play_seat(
        ModelPlayer(model, trace),
        bot.address,
        bot.token,
        tls=bot.tls,
        channel_options=SEAT_CHANNEL_OPTIONS,
        reconnect_window_s=bot.reconnect_window_s,
    )
    return run_seat(model.name, bot, seat, done)
