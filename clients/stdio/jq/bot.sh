#!/bin/sh
# A Pusoy Dos / Big Two bot for the referee's stdio protocol, in jq: no gRPC.
#
#   referee match --bot "stdio:sh clients/stdio/jq/bot.sh" --bot greedy --bot random --bot greedy
#
# The referee's bridge writes one JSON object per line on stdin, one per message of the
# Play stream ({"welcome":...}, {"prompt":...}, {"result":...}, {"event":...}). The bot
# answers each prompt, and each rejection of its current turn that leaves attempts, with
# one line on stdout: the cards ("5D 5C") or "pass". docs/protocol.md, section 8, has the
# whole protocol.
#
# The message loop and the strategy are in bot.jq, run by one jq process for the whole
# match: jq reads each line as it comes and, with --unbuffered, writes each answer at
# once. (Starting jq for every prompt instead, from a shell loop, costs jq's start-up,
# tens of milliseconds of CPU, on every turn.)
#
# Option --misbehave makes the first answer of each hand a card the bot does not hold, to
# exercise the rejection path (the referee rejects it, the bot answers again).
set -eu
misbehave=false
[ "${1:-}" = "--misbehave" ] && misbehave=true
exec jq -nr --unbuffered --argjson misbehave "$misbehave" -f "$(dirname "$0")/bot.jq"
