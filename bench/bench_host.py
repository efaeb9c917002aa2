#!/usr/bin/env python3
"""The referee's own work per move, with no network: CPU time of ``MatchHost.step``.

Plays whole matches through the match host exactly as the server does (decide, one log
write per decision into a real file, adopt the state, the observer's messages into each
seat's bounded outbox), with four in-process random bots that read their prompts from the
outboxes. No gRPC, no event loop turns: what is left is what the referee adds to a move
on top of the transport, the figure that ``bench_server.py`` can only show as a
difference between two noisy runs. CPU time (``time.process_time``), so a busy machine
moves it less than wall-clock figures.

    python bench/bench_host.py                      # live and batched seats, 5 rounds
    python bench/bench_host.py --profile            # and a cProfile of one round
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.log.writer import EventLogWriter  # noqa: E402
from referee.match import machine  # noqa: E402
from referee.match.settings import MatchSettings  # noqa: E402
from referee.protocol import common  # noqa: E402
from referee.rules import Rules  # noqa: E402
from referee.server.host import Clock, Inbound, MatchHost  # noqa: E402
from referee.server.sessions import Session  # noqa: E402


def play_match(
    log_dir: Path, seed: str, hands: int, batch: bool, rng: random.Random
) -> tuple[int, int]:
    """One match through a MatchHost; (moves, messages queued for the seats)."""
    rules = Rules.for_profile("big-two").with_options({"match_end": f"hands {hands}"})
    settings = MatchSettings(rules, seed=seed, turn_time_ms=10_000)
    clock = Clock()
    first = machine.create(
        seed,
        settings,
        clock.now(),
        ["t0", "t1", "t2", "t3"],
        software_version="bench",
        protocol_version=1,
    )
    writer = EventLogWriter.create(log_dir / f"{seed}.jsonl", seed)
    writer.append(first.events, first.now, first.command)
    host = MatchHost(first.state, writer, clock=clock)
    sessions = [Session(seat) for seat in range(4)]
    for seat, session in enumerate(sessions):
        session.batch = [] if batch else None
        connect = common.ConnectCommand(
            seat=seat, bot_name="bench", want_legal_plays=True, batch_events=batch
        )
        host.step(Inbound(common.Command(connect=connect), clock.now(), session))
    moves = messages = 0
    while not host.state.over:
        prompt = None
        for session in sessions:
            items = session.outbox._items  # the stream handler's side, without a loop
            messages += len(items)
            while items:
                msg = items.popleft()
                if msg.WhichOneof("kind") == "prompt":
                    prompt = msg.prompt
        assert prompt is not None, "no prompt: the match cannot go on"
        options = [list(p.cards) for p in prompt.legal_plays]
        if prompt.can_pass:
            options.append([])
        choice = rng.choice(options)
        command = common.ActionCommand(seat=prompt.seat, turn_id=prompt.turn_id)
        if choice:
            command.cards.extend(choice)
        else:
            setattr(command, "pass", True)
        host.step(Inbound(common.Command(action=command), clock.now(), sessions[prompt.seat]))
        moves += 1
    for session in sessions:
        messages += len(session.outbox._items)
    writer.close()
    return moves, messages


def run_round(matches: int, hands: int, batch: bool, seed: int) -> tuple[int, int, float]:
    rng = random.Random(seed)
    moves = messages = 0
    with tempfile.TemporaryDirectory() as d:
        t0 = time.process_time()
        for i in range(matches):
            m, n = play_match(Path(d), f"bench-{seed}-{i}", hands, batch, rng)
            moves += m
            messages += n
        cpu = time.process_time() - t0
    return moves, messages, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=10, help="matches per round (default 10)")
    ap.add_argument("--hands", type=int, default=4, help="hands per match (default 4)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="print a cProfile of one round")
    args = ap.parse_args()
    run_round(2, 1, False, 0)  # warm up: imports, caches
    for batch in (False, True):
        cpu_us, per_move = [], []
        for rnd in range(args.rounds):
            moves, messages, cpu = run_round(args.matches, args.hands, batch, rnd)
            cpu_us.append(cpu / moves * 1e6)
            per_move.append(messages / moves)
        name = "batched" if batch else "live"
        print(
            f"{name:8} seats: {statistics.median(cpu_us):6.1f} µs CPU per move "
            f"({min(cpu_us):.1f}-{max(cpu_us):.1f} over {args.rounds} rounds), "
            f"{statistics.median(per_move):.2f} messages to the seats per move"
        )
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        run_round(args.matches, args.hands, False, 99)
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(45)
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
