#!/usr/bin/env bash
# Builds the Go starter kit: installs the protoc plugins, generates the protocol code
# from ../../proto, builds the client library, the sample bot (bin/pusoy-bot) and the
# conformance bot (bin/conformance-bot). Idempotent; runs from any directory. What it
# makes stays in this folder (gen/, bin/; gitignored); what Go downloads and compiles
# (modules, the build cache, the two plugins) goes to the per-user build cache of
# ../build-cache.sh, shared by every clone on this machine.
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

# The module and build caches in the per-user build cache (Go keys its build cache by
# the contents of every input, and both caches are safe to share between builds running
# at once); never fetch another toolchain; keep the module cache deletable.
# shellcheck source=../build-cache.sh
source "$here/../build-cache.sh"
cache="$(kit_cache go "$here")"
export GOTOOLCHAIN=local
export GOMODCACHE="$cache/mod"
export GOCACHE="$cache/build"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw -buildvcs=false"

# -- protoc plugins (from the Go module proxy, into the cache's tools/) ---------------
# One file per plugin and version (tools/NAME@VERSION), installed once per machine: built
# in a folder of its own, then renamed into place, so a build running beside another
# never runs a half-written plugin.
tools="$cache/tools"
mkdir -p "$tools"
install_plugin() { # name package version
  local exe="$tools/$1@$3" tmp
  [ -x "$exe" ] && return
  step "go install $2@$3"
  tmp="$(mktemp -d "$tools/.install.XXXXXX")"
  GOBIN="$tmp" nice -n 10 go install "$2@$3" ||
    { rm -rf "$tmp"; die "could not install $2@$3 from the Go module proxy"; }
  mv -f "$tmp/$1" "$exe"
  rm -rf "$tmp"
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
  -plugin "go=$tools/protoc-gen-go@$PROTOC_GEN_GO_VERSION:$maps" \
  -plugin "go-grpc=$tools/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION:$maps" \
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
