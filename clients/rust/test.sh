#!/usr/bin/env bash
# The Rust kit's tests: builds (./build.sh), then cargo test (release, the build.sh
# profile: the dependencies are not compiled twice) of the library, the sample bot and
# the helpers against the conformance data, then the shared conformance suite against
# target/release/conformance-bot.
# Extra arguments go to cargo test (e.g. ./test.sh -- fallback).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/build.sh"
# shellcheck source=cargo-env.sh
source "$here/cargo-env.sh"
take_build_dir
nice -n 10 cargo test --release --locked --workspace --manifest-path "$here/Cargo.toml" "$@"
release_build_dir
echo "== conformance: clients/conformance/run"
exec "$here/../conformance/run" --bot "$CARGO_TARGET_DIR/release/conformance-bot" --features tls batched_events
