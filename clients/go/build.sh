#!/usr/bin/env bash
# Builds the Go starter kit: installs the protoc plugins, generates the protocol code
# from ../../proto, builds the client library, the sample bot (bin/pusoy-bot) and the
# conformance bot (bin/conformance-bot). Idempotent; runs from any directory. Everything
# it downloads or caches stays in this folder (.cache/, .tools/, gen/, bin/; gitignored).
#
# No protoc: everything comes from the Go module proxy. internal/protogen compiles the
# .proto files with protocompile (pure Go, pinned in go.mod) and runs the plugins
# protoc-gen-go and protoc-gen-go-grpc (go install, pinned below) on them as protoc would.
set -euo pipefail

PROTOC_GEN_GO_VERSION=v1.36.12      # google.golang.org/protobuf/cmd/protoc-gen-go
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2   # google.golang.org/grpc/cmd/protoc-gen-go-grpc
GO_MIN_MINOR=26                     # go.mod says go 1.26.0 (what grpc v1.85.0 needs)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# One build of this kit at a time (tests on two workers, a second terminal): wait for
# the one running; it leaves nothing for this one to redo.
if command -v flock >/dev/null 2>&1; then exec 9>"$here/.build.lock"; flock 9; fi
repo="$(cd "$here/../.." && pwd)"
cd "$here"

die() { echo "build.sh: error: $*" >&2; exit 1; }
step() { echo "== $*"; }

# -- toolchain ---------------------------------------------------------------------
command -v go >/dev/null 2>&1 || die "the Go toolchain (go 1.$GO_MIN_MINOR or newer) is not on PATH; install it from https://go.dev/dl/ and retry"
gover="$(go env GOVERSION)"
minor="$(echo "$gover" | sed -nE 's/^go1\.([0-9]+).*/\1/p')"
[ -n "$minor" ] && [ "$minor" -ge "$GO_MIN_MINOR" ] || die "go 1.$GO_MIN_MINOR or newer is needed, found $gover"

# Keep every cache inside the kit, never fetch another toolchain, keep the module cache
# deletable (rm -rf .cache).
export GOTOOLCHAIN=local
export GOMODCACHE="$here/.cache/mod"
export GOCACHE="$here/.cache/build"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw -buildvcs=false"
export GOBIN="$here/.tools/bin"

# -- protoc plugins (from the Go module proxy, into .tools/bin) ----------------------
install_plugin() { # name package version
  local exe="$GOBIN/$1"
  if [ -x "$exe" ] && "$exe" --version 2>/dev/null | grep -q -- "${3#v}\$"; then
    return
  fi
  step "go install $2@$3"
  nice -n 10 go install "$2@$3" || die "could not install $2@$3 from the Go module proxy"
}
install_plugin protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go "$PROTOC_GEN_GO_VERSION"
install_plugin protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION"

# -- generate ------------------------------------------------------------------------
# The protos' go_package points at an import path outside this module; M options map
# each file into gen/refereev1 here, and module= strips the module prefix from the
# output paths.
module="$(go list -m)"
gopkg="$module/gen/refereev1;refereev1"
protos=()
maps="module=$module"
for f in "$repo"/proto/pusoy/referee/v1/*.proto; do
  rel="${f#"$repo/proto/"}"
  protos+=("$rel")
  maps+=",M$rel=$gopkg"
done
[ "${#protos[@]}" -gt 0 ] || die "no .proto files under $repo/proto/pusoy/referee/v1"
step "generate gen/refereev1 from ${#protos[@]} protos (protocompile + protoc-gen-go, protoc-gen-go-grpc)"
tmp="$(mktemp -d "$here/.gen.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
nice -n 10 go run ./internal/protogen -I "$repo/proto" -out "$tmp" \
  -plugin "go=$GOBIN/protoc-gen-go:$maps" \
  -plugin "go-grpc=$GOBIN/protoc-gen-go-grpc:$maps" \
  "${protos[@]}" || die "code generation failed"
rm -rf gen
mv "$tmp/gen" gen

# -- build ---------------------------------------------------------------------------
step "go build ./... and bin/pusoy-bot"
nice -n 10 go build ./... || die "go build failed"
nice -n 10 go build -trimpath -o bin/pusoy-bot ./cmd/pusoy-bot || die "building the sample bot failed"
nice -n 10 go build -trimpath -o bin/conformance-bot ./cmd/conformance-bot || die "building the conformance bot failed"
nice -n 10 go build -trimpath -o bin/pusoy-seats ./cmd/pusoy-seats || die "building pusoy-seats failed"
step "built $here/bin/pusoy-bot (run it with $here/bot)"
