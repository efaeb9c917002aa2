"""A crowd of spectators in a process of its own: ``crowd.py ADDRESS MATCH_ID N``.

Opens N WatchMatch streams from the start, says "watching" on stdout, then reads them
slowly; a test freezes the process (SIGSTOP) to make N readers that never read.
"""

from __future__ import annotations

import asyncio
import sys

import grpc

from referee.protocol import spectator_service, spectator_service_grpc


async def main(address: str, match_id: str, n: int) -> None:
    # a small flow-control window, so that a frozen crowd soon stops gRPC sending to it
    options = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 16384)]
    async with grpc.aio.insecure_channel(address, options=options) as channel:
        stub = spectator_service_grpc.SpectatorServiceStub(channel)
        request = spectator_service.WatchMatchRequest(match_id=match_id, from_start=True)
        calls = [stub.WatchMatch(request) for _ in range(n)]
        for call in calls:
            await call.wait_for_connection()
        print("watching", flush=True)
        await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
