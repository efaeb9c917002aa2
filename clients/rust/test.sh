#!/usr/bin/env bash
# Runs the unit tests of the client library and the sample bot with cargo test.
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
exec nice -n 10 cargo test --locked --workspace --manifest-path "$here/Cargo.toml" "$@"
