#!/usr/bin/env bash
# Build the C++ starter kit: the client library (libpusoy_client), the sample bot, the
# conformance bot and the unit tests, into clients/cpp/build (Release, with Ninja when it
# is there). Idempotent: a second run rebuilds only what changed; runs from any directory.
#
# Dependencies come from Debian's packages (bookworm: gRPC 1.51, protobuf 3.21,
# GoogleTest 1.12), installed beforehand: this script checks them and says what to
# install, but installs nothing itself. The C++ code for the .proto files is
# generated at build time by CMake from ../../proto (protoc + grpc_cpp_plugin) into
# build/gen; nothing generated is committed.
#
# With ccache installed (Debian's package), every compiled object is kept in the per-user
# build cache (../build-cache.sh: cpp/ccache), so a later build, of this clone or another,
# compiles only what changed; without it, everything is compiled.
#
# Environment:
#   PUSOY_CPP_BUILD_TYPE  CMake build type (default: Release)
#   PUSOY_CPP_JOBS        parallel compile jobs (default: 2)
set -euo pipefail

KIT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# One build of this kit at a time (tests on two workers, a second terminal): wait for
# the one running; it leaves nothing for this one to redo.
if command -v flock >/dev/null 2>&1; then exec 9>"$KIT_DIR/.build.lock"; flock 9; fi
BUILD_DIR="$KIT_DIR/build"
BUILD_TYPE="${PUSOY_CPP_BUILD_TYPE:-Release}"
JOBS="${PUSOY_CPP_JOBS:-2}"

die() {
    echo "build.sh: ERROR: $*" >&2
    exit 1
}
say() { echo "build.sh: $*"; }

# --- 1. Prerequisites ------------------------------------------------------------------
# This script installs nothing: a build step that needs root and changes the system is
# not a build step. The prerequisites, from Debian's packages (bookworm):
PACKAGES=(
    g++ make cmake ninja-build pkg-config
    protobuf-compiler libprotobuf-dev
    protobuf-compiler-grpc libgrpc++-dev
    libgtest-dev
)
missing_help() {
    die "$1 is missing. Install the prerequisites first, e.g. on Debian or Ubuntu:
    sudo apt-get install -y --no-install-recommends ${PACKAGES[*]}
(elsewhere: a C++17 compiler, CMake >= 3.16, protoc and grpc_cpp_plugin, gRPC C++ >= 1.51
with protobuf and pkg-config files, and GoogleTest)"
}

# --- 2. Toolchain check: fail loudly, never skip --------------------------------------
for tool in c++ cmake protoc grpc_cpp_plugin pkg-config; do
    command -v "$tool" >/dev/null 2>&1 || missing_help "'$tool'"
done
if command -v ninja >/dev/null 2>&1; then
    GENERATOR="Ninja"
elif command -v make >/dev/null 2>&1; then
    GENERATOR="Unix Makefiles"
else
    die "neither ninja nor make is on PATH"
fi
pkg-config --exists grpc++ protobuf || missing_help "gRPC C++ (pkg-config grpc++ protobuf)"
say "toolchain: $(c++ --version | head -n1); $(cmake --version | head -n1);" \
    "$(protoc --version); grpc++ $(pkg-config --modversion grpc++); generator $GENERATOR"

# --- 3. Compiler cache -----------------------------------------------------------------
# ccache keys an object by the preprocessed source and the compiler's options; paths under
# the repository are taken relative to it (CCACHE_BASEDIR), so two clones, wherever they
# are, share their objects.
LAUNCHER=""
if command -v ccache >/dev/null 2>&1; then
    # shellcheck source=../build-cache.sh
    source "$KIT_DIR/../build-cache.sh"
    LAUNCHER="$(command -v ccache)"
    CCACHE_DIR="$(kit_cache cpp "$KIT_DIR")/ccache"
    CCACHE_BASEDIR="$(cd "$KIT_DIR/../.." && pwd)"
    export CCACHE_DIR CCACHE_BASEDIR
    say "compiler cache: ccache $(ccache --version | sed -n '1s/.* //p') in $CCACHE_DIR"
else
    say "no ccache: compiling everything (with ccache, later builds reuse the objects)"
fi

# --- 4. Configure and build -----------------------------------------------------------
# Reconfigure from scratch when the cache was made by another generator or source dir.
if [[ -f "$BUILD_DIR/CMakeCache.txt" ]]; then
    cached_gen="$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$BUILD_DIR/CMakeCache.txt")"
    cached_src="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD_DIR/CMakeCache.txt")"
    cached_type="$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD_DIR/CMakeCache.txt")"
    if [[ "$cached_gen" != "$GENERATOR" || "$cached_src" != "$KIT_DIR" || "$cached_type" != "$BUILD_TYPE" ]]; then
        say "stale CMake cache ($cached_gen, $cached_src, $cached_type): reconfiguring"
        rm -rf "$BUILD_DIR"
    fi
fi
cached_launcher=""
if [[ -f "$BUILD_DIR/CMakeCache.txt" ]]; then
    cached_launcher="$(sed -n 's/^CMAKE_CXX_COMPILER_LAUNCHER:[A-Z]*=//p' \
        "$BUILD_DIR/CMakeCache.txt")"
fi
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" || "$cached_launcher" != "$LAUNCHER" ]]; then
    nice -n 10 cmake -S "$KIT_DIR" -B "$BUILD_DIR" -G "$GENERATOR" \
        -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DCMAKE_CXX_COMPILER_LAUNCHER="$LAUNCHER" >/dev/null ||
        die "CMake configuration failed (re-run: cmake -S $KIT_DIR -B $BUILD_DIR)"
fi
nice -n 10 cmake --build "$BUILD_DIR" --parallel "$JOBS" || die "the build failed"

[[ -x "$BUILD_DIR/pusoy_sample_bot" ]] || die "the sample bot was not built"
[[ -x "$BUILD_DIR/pusoy_conformance_bot" ]] || die "the conformance bot was not built"
say "built $BUILD_DIR/pusoy_sample_bot, $BUILD_DIR/pusoy_conformance_bot, $BUILD_DIR/libpusoy_client.a and the unit tests"
say "run the tests with $KIT_DIR/test.sh; the bot with $KIT_DIR/bot --address A --token T"
