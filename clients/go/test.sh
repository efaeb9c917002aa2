#!/usr/bin/env bash
# The Go kit's tests: go vet, the unit tests (library and sample bot) with go test, then
# the shared conformance suite (clients/conformance) against bin/conformance-bot.
# Builds first (./build.sh) so the generated protocol code is present.
#   ./test.sh            everything
#   ./test.sh -run Misbehave -v    extra arguments go to `go test`
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
./build.sh
# shellcheck source=../build-cache.sh
source "$here/../build-cache.sh"
cache="$(kit_cache go "$here")"
export GOTOOLCHAIN=local
export GOMODCACHE="$cache/mod"
export GOCACHE="$cache/build"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw -buildvcs=false"
echo "== go vet ./..."
nice -n 10 go vet ./...
echo "== go test ./..."
nice -n 10 go test -count=1 "$@" ./...
echo "== conformance: clients/conformance/run"
exec "$here/../conformance/run" --bot "$here/bin/conformance-bot" --features tls batched_events
