// The generated protocol types, under the short alias pusoy::pb.
//
// The C++ code of ../../proto/pusoy/referee/v1/*.proto is generated at build time into
// build/gen by CMake (protoc + grpc_cpp_plugin); see CMakeLists.txt.
#pragma once

#include "pusoy/referee/v1/common.pb.h"
#include "pusoy/referee/v1/play_service.grpc.pb.h"
#include "pusoy/referee/v1/play_service.pb.h"

namespace pusoy {

/// The messages of package pusoy.referee.v1, e.g. pb::TurnPrompt, pb::Event.
namespace pb = ::pusoy::referee::v1;

/// The bot protocol version this library speaks (Hello.protocol_version).
inline constexpr std::uint32_t kProtocolVersion = 1;

}  // namespace pusoy
