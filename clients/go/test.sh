#!/usr/bin/env bash
# Runs the Go kit's unit tests (library and sample bot) with go test.
# Builds first (./build.sh) so the generated protocol code is present.
#   ./test.sh            all tests
#   ./test.sh -run Misbehave -v    extra arguments go to `go test`
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
./build.sh
export GOTOOLCHAIN=local
export GOMODCACHE="$here/.cache/mod"
export GOCACHE="$here/.cache/build"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw -buildvcs=false"
echo "== go vet ./..."
nice -n 10 go vet ./...
echo "== go test ./..."
nice -n 10 go test -count=1 "$@" ./...
