#!/usr/bin/env bash
# Builds the Rust starter kit in release mode: the client library (with the gRPC code
# generated from ../../proto at build time), the sample bot and the conformance bot,
# into target/release beside this script.
# Idempotent; runs from any directory. Crates come from crates.io only, at the versions
# pinned in Cargo.lock; target/ caches everything for the next run.
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

# rustup installs to ~/.cargo/bin, which a non-login shell may not have on PATH.
if ! command -v cargo >/dev/null 2>&1 && [ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]; then
    PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
fi
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

export CARGO_TARGET_DIR="$here/target"
echo "build.sh: cargo $(cargo --version | awk '{print $2}'), rustc $rust_version; building in $CARGO_TARGET_DIR"
# Release builds: the bot that plays is the optimised one (test.sh tests the same build).
nice -n 10 cargo build --release --locked --workspace --manifest-path "$here/Cargo.toml"

bot_bin="$CARGO_TARGET_DIR/release/sample-bot"
[ -x "$bot_bin" ] || fail "the build finished but $bot_bin is missing."
echo "build.sh: ok: sample bot at $bot_bin (run it with $here/bot)"
