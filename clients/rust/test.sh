#!/usr/bin/env bash
# The Rust kit's tests: cargo test (release, the build.sh profile: nothing is compiled
# twice) of the library, the sample bot and the helpers against the conformance data,
# then the shared conformance suite against target/release/conformance-bot.
# Extra arguments go to cargo test (e.g. ./test.sh -- fallback).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if ! command -v cargo >/dev/null 2>&1 && [ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]; then
    PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "test.sh: error: cargo was not found. Install Rust 1.88 or newer (https://rustup.rs); see README.md." >&2
    exit 1
fi

export CARGO_TARGET_DIR="$here/target"
nice -n 10 cargo test --release --locked --workspace --manifest-path "$here/Cargo.toml" "$@"
nice -n 10 cargo build --release --locked --workspace --manifest-path "$here/Cargo.toml"
echo "== conformance: clients/conformance/run"
exec "$here/../conformance/run" --bot "$CARGO_TARGET_DIR/release/conformance-bot" --features tls batched_events
