"""The protocol: the generated protobuf modules under short names (generated code lives in
referee/proto), and the translation between rules values and messages (convert)."""

from referee.proto.pusoy.referee.v1 import common_pb2 as common
from referee.proto.pusoy.referee.v1 import lobby_service_pb2 as lobby_service
from referee.proto.pusoy.referee.v1 import lobby_service_pb2_grpc as lobby_service_grpc
from referee.proto.pusoy.referee.v1 import match_service_pb2 as match_service
from referee.proto.pusoy.referee.v1 import match_service_pb2_grpc as match_service_grpc
from referee.proto.pusoy.referee.v1 import play_service_pb2 as play_service
from referee.proto.pusoy.referee.v1 import play_service_pb2_grpc as play_service_grpc
from referee.proto.pusoy.referee.v1 import spectator_service_pb2 as spectator_service
from referee.proto.pusoy.referee.v1 import spectator_service_pb2_grpc as spectator_service_grpc

PROTOCOL_VERSION = 1
SUPPORTED_PROTOCOL_VERSIONS = (1,)
LOG_SCHEMA_VERSION = 2
SUPPORTED_LOG_SCHEMA_VERSIONS = (1, 2)

__all__ = [
    "LOG_SCHEMA_VERSION",
    "PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "common",
    "lobby_service",
    "lobby_service_grpc",
    "match_service",
    "match_service_grpc",
    "play_service",
    "play_service_grpc",
    "spectator_service",
    "spectator_service_grpc",
]
