"""The image's health check: the referee's gRPC health service answers SERVING.

Exit 0 when healthy, 1 otherwise (Docker's HEALTHCHECK contract). The address is
REFEREE_HEALTH_ADDRESS (default 127.0.0.1:50051), inside the container. Plaintext,
unless REFEREE_HEALTH_TLS_CA names the CA of the server's certificate (a server started
with --tls-cert serves TLS only); with mutual TLS, REFEREE_HEALTH_TLS_CERT and
REFEREE_HEALTH_TLS_KEY are a client certificate and its key, and
REFEREE_HEALTH_TLS_SERVER_NAME the name to expect when the certificate does not name
the address.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.client.tls import ClientTls, TlsError


def channel(address: str) -> grpc.Channel:
    """Plaintext, or TLS as the referee's own clients speak it (referee.client.tls)."""
    env = os.environ
    if not env.get("REFEREE_HEALTH_TLS_CA"):
        return grpc.insecure_channel(address)
    cert, key = env.get("REFEREE_HEALTH_TLS_CERT"), env.get("REFEREE_HEALTH_TLS_KEY")
    tls = ClientTls(
        ca=Path(env["REFEREE_HEALTH_TLS_CA"]),
        cert=Path(cert) if cert else None,
        key=Path(key) if key else None,
        server_name=env.get("REFEREE_HEALTH_TLS_SERVER_NAME", ""),
    )
    return grpc.secure_channel(address, tls.credentials(), options=tls.options())


def main() -> int:
    address = os.environ.get("REFEREE_HEALTH_ADDRESS", "127.0.0.1:50051")
    try:
        with channel(address) as ch:
            answer = health_pb2_grpc.HealthStub(ch).Check(
                health_pb2.HealthCheckRequest(), timeout=3
            )
    except TlsError as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1
    except grpc.RpcError as exc:
        print(f"unhealthy: {address}: {exc.code().name}", file=sys.stderr)
        return 1
    if answer.status != health_pb2.HealthCheckResponse.SERVING:
        print(f"unhealthy: {health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
