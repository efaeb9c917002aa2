"""One match on a running referee, for bots that run elsewhere (compose.yaml's `match`).

The organiser's side, through the organiser API only: create the match, hand each seat's
token to its bot (a file in that seat's own folder, which only that bot's container
mounts), follow the match as a spectator, then fetch its log (GetMatchLog), verify it,
and keep the verified copy in the results folder.

    python play_match.py --referee referee:50051 --seats /seats --results /results

Exit status: 0 the match finished and its log verified; 1 it did not (cancelled, or the
log does not verify); 2 the referee cannot be reached or refused the request.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.files import replace_private_file
from referee.log.verify import verify_log
from referee.protocol import (
    common,
    match_service,
    match_service_grpc,
    spectator_service,
    spectator_service_grpc,
)

SEATS = 4


def say(text: str) -> None:
    print(f"match: {text}", flush=True)


def wait_serving(channel: grpc.Channel, address: str, wait_s: float) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            answer = health.Check(health_pb2.HealthCheckRequest(), timeout=3)
            if answer.status == health_pb2.HealthCheckResponse.SERVING:
                return
        except grpc.RpcError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"match: the referee at {address} is not serving after {wait_s} s")
        time.sleep(0.5)


def hand_out(seats: Path, seat: int, token: str) -> None:
    """The token, written whole and readable by its owner only, in the seat's folder."""
    replace_private_file(seats / str(seat) / "token", token.encode("ascii"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--referee", default=os.environ.get("PUSOY_REFEREE", "referee:50051"))
    ap.add_argument("--seats", type=Path, default=Path("/seats"), help="folders 0..3")
    ap.add_argument("--results", type=Path, default=Path("/results"))
    ap.add_argument("--profile", default="pusoy-dos")
    ap.add_argument("--hands", type=int, default=2)
    ap.add_argument("--seed", default="", help="default: a random seed, revealed at the end")
    ap.add_argument("--names", default="seat0,seat1,seat2,seat3", help="four seat names")
    ap.add_argument("--turn-time-ms", type=int, default=5000)
    ap.add_argument("--connect-timeout-ms", type=int, default=120_000)
    ap.add_argument(
        "--organiser-token-file",
        type=Path,
        default=Path("/run/secrets/organiser_token"),
        help="sent as 'authorization: Bearer TOKEN' when the file exists",
    )
    ap.add_argument("--wait-s", type=float, default=60.0, help="for the referee to serve")
    args = ap.parse_args(argv)
    names = args.names.split(",")
    if len(names) != SEATS:
        ap.error(f"--names wants {SEATS} names")

    metadata: list[tuple[str, str]] = []
    if args.organiser_token_file.is_file():
        token = args.organiser_token_file.read_text("utf-8").strip()
        metadata.append(("authorization", f"Bearer {token}"))

    with grpc.insecure_channel(args.referee) as channel:
        wait_serving(channel, args.referee, args.wait_s)
        matches = match_service_grpc.MatchServiceStub(channel)
        try:
            created = matches.CreateMatch(
                match_service.CreateMatchRequest(
                    profile=args.profile,
                    hands=args.hands,
                    seed=args.seed,
                    seat_names=names,
                    time_control=common.TimeControl(
                        turn_time_ms=args.turn_time_ms,
                        connect_timeout_ms=args.connect_timeout_ms,
                    ),
                ),
                metadata=metadata,
                timeout=30,
            )
        except grpc.RpcError as exc:
            say(f"CreateMatch failed: {exc.code().name}: {exc.details()}")
            return 2
        match_id = created.match_id
        say(f"created {match_id} ({args.profile}, {args.hands} hands), seats {', '.join(names)}")
        for seat, token in enumerate(created.seat_tokens):
            hand_out(args.seats, seat, token)

        watch = spectator_service_grpc.SpectatorServiceStub(channel).WatchMatch(
            spectator_service.WatchMatchRequest(match_id=match_id, from_start=True),
            metadata=metadata,
        )
        for item in watch:
            kind = item.event.WhichOneof("kind")
            if kind == "seat_connected":
                sc = item.event.seat_connected
                say(f"seat {sc.seat} ({names[sc.seat]}) connected as {sc.bot_name!r}")
            elif kind == "hand_ended":
                he = item.event.hand_ended
                say(f"hand {he.hand_number} won by seat {he.winner}; totals {list(he.totals)}")
        info = matches.GetMatch(
            match_service.GetMatchRequest(match_id=match_id), metadata=metadata, timeout=30
        ).match
        for seat in range(SEATS):
            (args.seats / str(seat) / "token").unlink(missing_ok=True)

        args.results.mkdir(parents=True, exist_ok=True)
        path = args.results / f"{match_id}.jsonl"
        part = path.with_suffix(".jsonl.part")
        with part.open("w", encoding="utf-8", newline="") as out:
            for chunk in matches.GetMatchLog(
                match_service.GetMatchLogRequest(match_id=match_id), metadata=metadata
            ):
                out.write(f"{chunk.line}\n")
        os.replace(part, path)

    status = common.MatchStatus.Name(info.status)
    report = verify_log(path)
    say(report.summary())
    places = ", ".join(f"{s.place}. {names[s.seats[0]]}" for s in info.standings)
    say(f"{status}; standings {places}")
    (args.results / f"{match_id}.verify.txt").write_text(report.summary() + "\n", "utf-8")
    return 0 if report.ok and info.status == common.MATCH_STATUS_FINISHED else 1


if __name__ == "__main__":
    sys.exit(main())
