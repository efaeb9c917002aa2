#!/usr/bin/env bash
# Builds the Rust starter kit in release mode: the client library (with the gRPC code
# generated from ../../proto at build time), the sample bot and the conformance bot,
# into target/release beside this script.
# Idempotent; runs from any directory. Crates come from crates.io only, at the versions
# pinned in Cargo.lock; the compiled dependencies are kept for the next build, of this
# clone or another, in the per-user build cache (cargo-env.sh, ../build-cache.sh).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# One build of this kit at a time (tests on two workers, a second terminal): wait for
# the one running; it leaves nothing for this one to redo.
if command -v flock >/dev/null 2>&1; then exec 9>"$here/.build.lock"; flock 9; fi
min_rust="1.88.0"

fail() {
    echo "build.sh: error: $*" >&2
    exit 1
}

# shellcheck source=cargo-env.sh
source "$here/cargo-env.sh"
command -v cargo >/dev/null 2>&1 ||
    fail "cargo was not found. Install Rust $min_rust or newer (https://rustup.rs) and put cargo on PATH."
command -v rustc >/dev/null 2>&1 ||
    fail "rustc was not found next to cargo. Install Rust $min_rust or newer (https://rustup.rs)."
rust_version="$(rustc --version | awk '{print $2}')"
if [ "$(printf '%s\n%s\n' "$min_rust" "${rust_version%%-*}" | sort -V | head -n1)" != "$min_rust" ]; then
    fail "Rust $rust_version is too old: this kit needs $min_rust or newer (rustup update stable)."
fi
[ -d "$here/../../proto/pusoy/referee/v1" ] ||
    fail "the protocol definitions are missing: expected $here/../../proto/pusoy/referee/v1 (keep the kit inside the pusoy-referee repository)."

take_build_dir
echo "build.sh: cargo $(cargo --version | awk '{print $2}'), rustc $rust_version; building in $CARGO_TARGET_DIR${CARGO_BUILD_BUILD_DIR:+ (intermediate files in $CARGO_BUILD_BUILD_DIR)}"
# Release builds: the bot that plays is the optimised one (test.sh tests the same build).
nice -n 10 cargo build --release --locked --workspace --manifest-path "$here/Cargo.toml"

bot_bin="$CARGO_TARGET_DIR/release/sample-bot"
[ -x "$bot_bin" ] || fail "the build finished but $bot_bin is missing."
echo "build.sh: ok: sample bot at $bot_bin (run it with $here/bot)"
