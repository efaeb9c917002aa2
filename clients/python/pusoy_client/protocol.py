"""The generated protobuf modules of the protocol under short names.

The kit has its own copy of the generated code (``_proto``, made from ``proto/`` by
``scripts/gen_proto.py`` and checked in CI), so it needs grpcio and protobuf only.
"""

from pusoy_client._proto.pusoy.referee.v1 import common_pb2 as common
from pusoy_client._proto.pusoy.referee.v1 import lobby_service_pb2 as lobby_service
from pusoy_client._proto.pusoy.referee.v1 import lobby_service_pb2_grpc as lobby_service_grpc
from pusoy_client._proto.pusoy.referee.v1 import play_service_pb2 as play_service
from pusoy_client._proto.pusoy.referee.v1 import play_service_pb2_grpc as play_service_grpc

PROTOCOL_VERSION = 1

__all__ = [
    "PROTOCOL_VERSION",
    "common",
    "lobby_service",
    "lobby_service_grpc",
    "play_service",
    "play_service_grpc",
]
