// The C++ client library of pusoy-referee: include this one header.
#pragma once

#include "pusoy/bot.hpp"
#include "pusoy/cli.hpp"
#include "pusoy/messages.hpp"
#include "pusoy/proto.hpp"
#include "pusoy/runner.hpp"
#include "pusoy/view.hpp"
