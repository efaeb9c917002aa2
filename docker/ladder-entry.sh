#!/bin/bash
# The ladder service: its config (LADDER_CONFIG, by default /ladder/ladder.toml) made
# ready (`referee ladder init`: a no-op after the first start), then the matchmaker with
# its workers and the public web in one container; either ending stops both.
set -eu
config="${LADDER_CONFIG:-/ladder/ladder.toml}"
referee ladder init "$config"
referee ladder run "$config" --metrics 0.0.0.0:9465 &
run=$!
# A container's published port is not loopback: keys are accepted over plain HTTP here,
# so publish 8080 only to a TLS proxy (or on 127.0.0.1, as compose.yaml does).
referee ladder serve "$config" --http 0.0.0.0:8080 --insecure &
web=$!
trap 'kill -TERM "$run" "$web" 2>/dev/null' TERM INT
wait -n "$run" "$web" 2>/dev/null || true
kill -TERM "$run" "$web" 2>/dev/null || true
wait
