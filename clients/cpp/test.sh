#!/usr/bin/env bash
# The C++ kit's tests: builds (./build.sh is quick when nothing changed), runs the unit
# tests (GoogleTest through CTest: options, prompt and budget, messages, the runner against
# an in-process fake referee, the comparator and tracker against clients/conformance's
# data, the sample bot), then the shared conformance suite (clients/conformance) against
# build/pusoy_conformance_bot.
#   ./test.sh              everything
#   ./test.sh -R Runner    extra arguments go to ctest (the suite still runs)
set -euo pipefail
KIT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$KIT_DIR/build.sh"
echo "== ctest"
(cd "$KIT_DIR/build" && nice -n 10 ctest --output-on-failure "$@")
echo "== conformance: clients/conformance/run"
exec "$KIT_DIR/../conformance/run" --features tls batched_events \
    --bot "$KIT_DIR/build/pusoy_conformance_bot"
