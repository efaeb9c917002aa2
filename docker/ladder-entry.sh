#!/bin/bash
# The ladder service: its config (LADDER_CONFIG, by default /ladder/ladder.toml) made
# ready (`referee ladder init`: a no-op after the first start), then the matchmaker with
# its workers and the public web in one container; either ending stops both, and the
# container's exit status is the first one's (0 after a SIGTERM that both obeyed).
set -eu
config="${LADDER_CONFIG:-/ladder/ladder.toml}"
referee ladder init "$config"
referee ladder run "$config" --metrics 0.0.0.0:9465 &
run=$!
# A container's published port is not loopback: keys are accepted over plain HTTP here,
# so publish 8080 only to a TLS proxy (or on 127.0.0.1, as compose.yaml does).
referee ladder serve "$config" --http 0.0.0.0:8080 --insecure &
web=$!
stopping=false
trap 'stopping=true; kill -TERM "$run" "$web" 2>/dev/null || true' TERM INT
status=0
wait -n "$run" "$web" || status=$?
if [ "$stopping" = true ]; then
  status=0  # wait -n was interrupted by the signal: the statuses come below
else
  echo "ladder-entry: a ladder process ended (status $status); stopping the other" >&2
  kill -TERM "$run" "$web" 2>/dev/null || true
fi
# Both ended: after a SIGTERM, the status is the worse of theirs.
for pid in "$run" "$web"; do
  code=0
  wait "$pid" || code=$?
  [ "$code" -ne 0 ] && [ "$code" -ne 127 ] && [ "$status" -eq 0 ] && status=$code
done
exit "$status"
