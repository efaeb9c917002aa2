"""The image's health check: the referee's gRPC health service answers SERVING.

Exit 0 when healthy, 1 otherwise (Docker's HEALTHCHECK contract). The address is
REFEREE_HEALTH_ADDRESS (default 127.0.0.1:50051), inside the container.
"""

from __future__ import annotations

import os
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def main() -> int:
    address = os.environ.get("REFEREE_HEALTH_ADDRESS", "127.0.0.1:50051")
    try:
        with grpc.insecure_channel(address) as channel:
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=3
            )
    except grpc.RpcError as exc:
        print(f"unhealthy: {address}: {exc.code().name}", file=sys.stderr)
        return 1
    if answer.status != health_pb2.HealthCheckResponse.SERVING:
        print(f"unhealthy: {health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
