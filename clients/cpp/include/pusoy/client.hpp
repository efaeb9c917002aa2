// The C++ client library of pusoy-referee: include this one header.
#pragma once

#include "pusoy/bot.hpp"
#include "pusoy/messages.hpp"
#include "pusoy/options.hpp"
#include "pusoy/prompt.hpp"
#include "pusoy/proto.hpp"
#include "pusoy/rules.hpp"
#include "pusoy/runner.hpp"
#include "pusoy/tracker.hpp"
