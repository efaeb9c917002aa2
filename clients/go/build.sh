#!/usr/bin/env bash
# Builds the Go starter kit: installs the protoc plugins, generates the protocol code
# from ../../proto, builds the client library and the sample bot (bin/pusoy-bot).
# Idempotent; runs from any directory. Everything it downloads or caches stays in this
# folder (.cache/, .tools/, gen/, bin/; all gitignored).
#
# protoc: the one shipped inside grpcio-tools (pinned by the project's pyproject.toml)
# in the repository's .venv, which scripts/setup (run by .ci/run) creates. Set PROTOC
# to a protoc binary to use another one (e.g. PROTOC=protoc after
# `apt-get install protobuf-compiler`).
set -euo pipefail

PROTOC_GEN_GO_VERSION=v1.36.12      # google.golang.org/protobuf/cmd/protoc-gen-go
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2   # google.golang.org/grpc/cmd/protoc-gen-go-grpc
GO_MIN_MINOR=26                     # go.mod says go 1.26.0 (what grpc v1.85.0 needs)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
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

# -- protoc ------------------------------------------------------------------------
if [ -n "${PROTOC:-}" ]; then
  command -v "$PROTOC" >/dev/null 2>&1 || die "PROTOC=$PROTOC is not an executable"
  protoc_cmd=("$PROTOC")
elif [ -x "$repo/.venv/bin/python" ] && "$repo/.venv/bin/python" -c 'import grpc_tools.protoc' 2>/dev/null; then
  protoc_cmd=("$repo/.venv/bin/python" -m grpc_tools.protoc)
else
  die "no protoc: the kit uses the protoc inside grpcio-tools in $repo/.venv; create it with $repo/scripts/setup (or set PROTOC to a protoc binary, e.g. from Debian's protobuf-compiler)"
fi
step "protoc: ${protoc_cmd[*]} ($("${protoc_cmd[@]}" --version))"

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
maps=()
for f in "$repo"/proto/pusoy/referee/v1/*.proto; do
  rel="${f#"$repo/proto/"}"
  protos+=("$rel")
  maps+=("--go_opt=M$rel=$gopkg" "--go-grpc_opt=M$rel=$gopkg")
done
[ "${#protos[@]}" -gt 0 ] || die "no .proto files under $repo/proto/pusoy/referee/v1"
step "generate gen/refereev1 from ${#protos[@]} protos"
tmp="$(mktemp -d "$here/.gen.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
(cd "$repo/proto" && "${protoc_cmd[@]}" -I . \
  --plugin=protoc-gen-go="$GOBIN/protoc-gen-go" \
  --plugin=protoc-gen-go-grpc="$GOBIN/protoc-gen-go-grpc" \
  --go_out="$tmp" --go_opt=module="$module" \
  --go-grpc_out="$tmp" --go-grpc_opt=module="$module" \
  "${maps[@]}" "${protos[@]}") || die "protoc failed"
rm -rf gen
mv "$tmp/gen" gen

# -- build ---------------------------------------------------------------------------
step "go build ./... and bin/pusoy-bot"
nice -n 10 go build ./... || die "go build failed"
nice -n 10 go build -o bin/pusoy-bot ./cmd/pusoy-bot || die "building the sample bot failed"
step "built $here/bin/pusoy-bot (run it with $here/bot)"
