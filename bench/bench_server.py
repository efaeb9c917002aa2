#!/usr/bin/env python3
"""Referee throughput against a bare gRPC reference with the same message pattern.

Runs alternately, in separate processes (server, and one process per seat that plays
that seat in every match at once, as real bots are separate programs):

* referee: ``referee serve``, N matches of fast scripted bots (random legal plays);
* bare: a gRPC server with no referee logic that sends, per move, the same number and
  size of messages to the four streams as the referee did (measured from the referee
  run) and waits for one action back.

Prints moves per second, server CPU per move, p50/p99 from a bot's action to the next
prompt, for each, and the ratio referee / bare.

    python bench/bench_server.py                 # 1 and 50 matches, 5 rounds each
    python bench/bench_server.py --matches 50 --rounds 3 --hands 2
    python bench/bench_server.py --matches 50 --batch   # and with all bots batching
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    cpu_seconds,
    create_matches,
    organiser_metadata,
    pct,
    serve_argv,
    start_server,
)

from referee.protocol import PROTOCOL_VERSION, common, play_service, play_service_grpc

BARE_METHOD = "/bench.Bare/Play"

# -- bots (one process per seat index, all matches) ------------------------------


async def referee_seat(
    address: str, token: str, rng: random.Random, rec: dict, batch: bool = False
) -> None:
    queue: asyncio.Queue[play_service.PlayRequest | None] = asyncio.Queue()
    queue.put_nowait(
        play_service.PlayRequest(
            hello=play_service.Hello(
                protocol_version=PROTOCOL_VERSION,
                token=token,
                want_legal_plays=True,
                batch_events=batch,
            )
        )
    )

    async def requests():
        while (msg := await queue.get()) is not None:
            yield msg

    async with grpc.aio.insecure_channel(address) as ch:
        call = play_service_grpc.PlayServiceStub(ch).Play(requests())
        match_id = ""
        async for msg in call:
            kind = msg.WhichOneof("kind")
            if kind == "prompt":
                p = msg.prompt
                rec["prompts"].append((match_id, p.turn_id, time.monotonic()))
                options = [list(x.cards) for x in p.legal_plays]
                if p.can_pass:
                    options.append([])
                choice = rng.choice(options)
                action = play_service.Action(turn_id=p.turn_id)
                if choice:
                    action.play.cards.extend(choice)
                else:
                    getattr(action, "pass").SetInParent()
                rec["actions"].append((match_id, p.turn_id, time.monotonic()))
                queue.put_nowait(play_service.PlayRequest(action=action))
            elif kind == "welcome":
                match_id = msg.welcome.match_id
            if rec.get("sizes") is not None:
                rec["sizes"].append(
                    (kind, msg.event.WhichOneof("kind") if kind == "event" else "", msg.ByteSize())
                )
            if kind == "event" and msg.event.HasField("match_ended"):
                break
            if kind == "batch" and any(e.HasField("match_ended") for e in msg.batch.events):
                break
        queue.put_nowait(None)
        call.cancel()


async def bare_seat(address: str, key: str, rec: dict) -> None:
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()
    queue.put_nowait(b"H" + key.encode())

    async def requests():
        while (msg := await queue.get()) is not None:
            yield msg

    async with grpc.aio.insecure_channel(address) as ch:
        play = ch.stream_stream(
            BARE_METHOD, request_serializer=lambda b: b, response_deserializer=lambda b: b
        )
        call = play(requests())
        async for msg in call:
            tag = msg[:1]
            if tag == b"P":
                move, action_size = struct.unpack(">II", msg[1:9])
                now = time.monotonic()
                rec["prompts"].append((key.split(":")[0], move, now))
                rec["actions"].append((key.split(":")[0], move, time.monotonic()))
                queue.put_nowait(b"A" + struct.pack(">I", move) + b"x" * max(0, action_size - 5))
            elif tag == b"E":
                break
        queue.put_nowait(None)
        call.cancel()


def run_bot_process(args: argparse.Namespace) -> None:
    spec = json.loads(Path(args.spec).read_text())
    rng = random.Random(args.seat)
    rec: dict = {"prompts": [], "actions": []}
    if args.record_sizes:
        rec["sizes"] = []

    async def main() -> None:
        if spec["mode"] == "referee":
            await asyncio.gather(
                *(
                    referee_seat(
                        spec["address"], toks[args.seat], rng, rec, spec.get("batch", False)
                    )
                    for toks in spec["tokens"]
                )
            )
        else:
            await asyncio.gather(
                *(
                    bare_seat(spec["address"], f"{m}:{args.seat}", rec)
                    for m in range(spec["matches"])
                )
            )

    asyncio.run(main())
    Path(args.out).write_text(json.dumps(rec))


# -- the bare reference server -----------------------------------------------------


class BareMatch:
    def __init__(self, pattern: dict, moves: int) -> None:
        self.pattern = pattern
        self.moves = moves
        self.queues: dict[int, asyncio.Queue[bytes | None]] = {}
        self.actions: asyncio.Queue[bytes] = asyncio.Queue()
        self.ready = asyncio.Event()

    async def run(self) -> None:
        await self.ready.wait()
        p = self.pattern
        before = b"T" + b"x" * (p["turn_started"] - 1)
        after = b"V" + b"x" * (p["event"] - 1)
        result = b"R" + b"x" * (p["result"] - 1)
        owed_before = owed_after = 0.0
        for move in range(self.moves):
            seat = move % 4
            # Events before the prompt and after the action, at the referee's average rate.
            owed_before += p["events_before_per_move"]
            owed_after += p["events_after_per_move"]
            n_before, n_after = int(owed_before), int(owed_after)
            owed_before -= n_before
            owed_after -= n_after
            for q in self.queues.values():
                for _ in range(n_before):
                    q.put_nowait(before)
            prompt = b"P" + struct.pack(">II", move, p["action"]) + b"x" * max(0, p["prompt"] - 9)
            self.queues[seat].put_nowait(prompt)
            await self.actions.get()
            self.queues[seat].put_nowait(result)
            for q in self.queues.values():
                for _ in range(n_after):
                    q.put_nowait(after)
        for q in self.queues.values():
            q.put_nowait(b"E")
            q.put_nowait(None)


def run_bare_server(args: argparse.Namespace) -> None:
    pattern = json.loads(Path(args.pattern).read_text())
    matches: dict[str, BareMatch] = {}

    async def handler(request_iterator, context):
        hello = await anext(request_iterator)
        mid, seat = hello[1:].decode().split(":")
        match = matches.setdefault(mid, BareMatch(pattern, pattern["moves_per_match"]))
        if not hasattr(match, "task"):
            match.task = asyncio.create_task(match.run())  # type: ignore[attr-defined]
        q: asyncio.Queue[bytes | None] = asyncio.Queue()
        match.queues[int(seat)] = q
        if len(match.queues) == 4:
            match.ready.set()

        async def read() -> None:
            async for msg in request_iterator:
                match.actions.put_nowait(msg)

        reader = asyncio.create_task(read())
        try:
            while (msg := await q.get()) is not None:
                yield msg
        finally:
            reader.cancel()

    async def main() -> None:
        server = grpc.aio.server()
        server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(
                    "bench.Bare",
                    {
                        "Play": grpc.stream_stream_rpc_method_handler(
                            handler, request_deserializer=None, response_serializer=None
                        )
                    },
                ),
            )
        )
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        print(f"listening on 127.0.0.1:{port};", flush=True)
        await server.wait_for_termination()

    asyncio.run(main())


# -- orchestration -------------------------------------------------------------------


async def run_bots(spec: dict, tmp: Path, record_sizes: bool = False) -> list[dict]:
    spec_path = tmp / "spec.json"
    spec_path.write_text(json.dumps(spec))
    procs = []
    for seat in range(4):
        argv = [
            sys.executable,
            __file__,
            "--bot-process",
            "--spec",
            str(spec_path),
            "--seat",
            str(seat),
            "--out",
            str(tmp / f"seat{seat}.json"),
        ]
        if record_sizes and seat == 0:
            argv.append("--record-sizes")
        procs.append(await asyncio.create_subprocess_exec(*argv))
    for p in procs:
        await p.wait()
    return [json.loads((tmp / f"seat{s}.json").read_text()) for s in range(4)]


def latencies(recs: list[dict]) -> list[float]:
    """Time from an action (turn t) to the next prompt (turn t+1) of the same match."""
    sent = {}
    for r in recs:
        for mid, turn, t in r["actions"]:
            sent[(mid, turn)] = t
    out = []
    for r in recs:
        for mid, turn, t in r["prompts"]:
            prev = sent.get((mid, turn - 1))
            if prev is not None:
                out.append((t - prev) * 1000)
    return out


async def referee_round(
    matches: int, hands: int, tmp: Path, record: bool, batch: bool = False
) -> tuple[dict, list[dict]]:
    serve = os.environ.get("BENCH_SERVE_SCRIPT")
    argv = [sys.executable, serve] if serve else serve_argv(tmp / "logs", tmp / "state")
    proc, address = await start_server(argv)
    try:
        created = await create_matches(
            address,
            organiser_metadata(tmp / "state"),
            matches,
            hands,
            common.TimeControl(turn_time_ms=10_000),
        )
        tokens = [list(c.seat_tokens) for c in created]
        cpu0 = cpu_seconds(proc.pid)
        t0 = time.perf_counter()
        recs = await run_bots(
            {"mode": "referee", "address": address, "tokens": tokens, "batch": batch},
            tmp,
            record,
        )
        wall = time.perf_counter() - t0
        cpu = cpu_seconds(proc.pid) - cpu0
    finally:
        proc.terminate()
        await proc.wait()
    moves = sum(len(r["actions"]) for r in recs)
    lat = latencies(recs)
    return {"moves": moves, "wall": wall, "cpu": cpu, "lat": lat}, recs


def pattern_from(recs0: dict, moves: int, matches: int) -> dict:
    """Average message sizes per kind seen by one seat, and events per move."""
    sizes: dict[str, list[int]] = {}
    for kind, ev, size in recs0["sizes"]:
        sizes.setdefault(ev or kind, []).append(size)

    def avg(name: str, default: int) -> int:
        return int(statistics.mean(sizes[name])) if name in sizes else default

    action = play_service.PlayRequest(
        action=play_service.Action(turn_id=123, play=common.Cards(cards=["9S", "9D"]))
    ).ByteSize()
    not_events = ("prompt", "result", "welcome", "snapshot", "turn_started")
    events_per_seat = sum(len(v) for k, v in sizes.items() if k not in not_events)
    # Seat 0's process sees every match, so these are per move of any match.
    return {
        "turn_started": avg("turn_started", 40),
        "event": avg("played", 60),
        "prompt": avg("prompt", 400),
        "result": avg("result", 10),
        "action": action,
        "events_before_per_move": len(sizes.get("turn_started", [])) / max(1, moves),
        "events_after_per_move": events_per_seat / max(1, moves),
        "moves_per_match": moves // matches,
    }


async def bare_round(matches: int, pattern: dict, tmp: Path) -> dict:
    pattern_path = tmp / "pattern.json"
    pattern_path.write_text(json.dumps(pattern))
    proc, address = await start_server(
        [sys.executable, __file__, "--bare-server", "--pattern", str(pattern_path)]
    )
    try:
        cpu0 = cpu_seconds(proc.pid)
        t0 = time.perf_counter()
        recs = await run_bots({"mode": "bare", "address": address, "matches": matches}, tmp)
        wall = time.perf_counter() - t0
        cpu = cpu_seconds(proc.pid) - cpu0
    finally:
        proc.terminate()
        await proc.wait()
    moves = sum(len(r["actions"]) for r in recs)
    return {"moves": moves, "wall": wall, "cpu": cpu, "lat": latencies(recs)}


def show(name: str, r: dict) -> str:
    rate = r["moves"] / r["wall"]
    cpu_us = r["cpu"] / max(1, r["moves"]) * 1e6
    return (
        f"{name:8} {r['moves']:7d} moves {rate:8.0f} moves/s  server CPU {cpu_us:6.0f} µs/move"
        f"  action->next prompt p50 {pct(r['lat'], 0.5):6.2f} ms p99 {pct(r['lat'], 0.99):6.2f} ms"
    )


def spread(values: list[float], fmt: str = ".2f") -> str:
    """Median and range, the form every figure is reported in (``fmt``: a format spec)."""
    return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"


async def bench(matches: int, hands: int, rounds: int, batch: bool) -> None:
    print(f"== {matches} match(es) at once, {hands} hand(s) each, big-two, random legal bots")
    rows: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        rows.setdefault(name, []).append(value)

    for rnd in range(rounds):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            ref, recs = await referee_round(matches, hands, tmp, record=True)
            pattern = pattern_from(recs[0], ref["moves"], matches)
            bare = await bare_round(matches, pattern, tmp)
            batched = None
            if batch:
                (tmp / "batch").mkdir()
                batched, _ = await referee_round(
                    matches, hands, tmp / "batch", record=False, batch=True
                )
        print(f"round {rnd + 1}:")
        print("  " + show("referee", ref))
        print("  " + show("bare", bare))
        if batched is not None:
            print("  " + show("batched", batched))
        rate = {k: r["moves"] / r["wall"] for k, r in (("ref", ref), ("bare", bare))}
        cpu = {k: r["cpu"] / max(1, r["moves"]) * 1e6 for k, r in (("ref", ref), ("bare", bare))}
        add("referee moves/s", rate["ref"])
        add("bare moves/s", rate["bare"])
        add("moves/s ratio referee/bare (target >= 0.75)", rate["ref"] / rate["bare"])
        add("referee CPU us/move", cpu["ref"])
        add("bare CPU us/move", cpu["bare"])
        add("CPU per move ratio referee/bare (target <= 1.5)", cpu["ref"] / cpu["bare"])
        add("referee p99 ms", pct(ref["lat"], 0.99))
        add("bare p99 ms", pct(bare["lat"], 0.99))
        add(
            "p99 ratio referee/bare (target <= 1.3 at 50)",
            pct(ref["lat"], 0.99) / pct(bare["lat"], 0.99),
        )
        if batched is not None:
            b_rate = batched["moves"] / batched["wall"]
            add("batched moves/s", b_rate)
            add("batched CPU us/move", batched["cpu"] / max(1, batched["moves"]) * 1e6)
            add("batched p99 ms", pct(batched["lat"], 0.99))
            add("moves/s ratio batched/live (target >= 1.5 at 50)", b_rate / rate["ref"])
        print(f"  bare pattern {pattern}")
    print(f"-- {matches} match(es): median (min-max) over {rounds} alternating rounds")
    for name, values in rows.items():
        fmt = ".2f" if "ratio" in name else ".1f" if " ms" in name else ".0f"
        print(f"  {name:52} {spread(values, fmt)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, nargs="+", default=[1, 50])
    ap.add_argument(
        "--hands",
        type=int,
        default=0,
        help="hands per match (default: 20 for one match, 2 for many)",
    )
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--batch",
        action="store_true",
        help="each round also plays the referee with all four bots batching their events",
    )
    ap.add_argument("--bot-process", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--bare-server", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--record-sizes", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    ap.add_argument("--seat", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--pattern", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.bot_process:
        run_bot_process(args)
        return
    if args.bare_server:
        run_bare_server(args)
        return
    for m in args.matches:
        asyncio.run(bench(m, args.hands or (20 if m == 1 else 2), args.rounds, args.batch))


if __name__ == "__main__":
    main()
