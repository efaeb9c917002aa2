#!/bin/sh
# A bot container's entry point: wait for this seat's token, which the organiser writes
# into the seat's own volume (PUSOY_TOKEN_FILE, default /run/seat/token), then run the
# bot with it in PUSOY_TOKEN (never on the command line). Every kit's sample bot reads
# PUSOY_ADDRESS and PUSOY_TOKEN.
set -eu
file=${PUSOY_TOKEN_FILE:-/run/seat/token}
wait_s=${PUSOY_TOKEN_WAIT_S:-300}
waited=0
while [ ! -s "$file" ]; do
  if [ "$waited" -ge "$((wait_s * 5))" ]; then
    echo "seat-entry: no token in $file after ${wait_s} s" >&2
    exit 1
  fi
  sleep 0.2
  waited=$((waited + 1))
done
PUSOY_TOKEN=$(cat "$file")
export PUSOY_TOKEN
exec "$@"
