#!/usr/bin/env bash
# Run the C++ kit's unit tests (GoogleTest, registered with CTest). Builds first
# (./build.sh is idempotent and quick when nothing changed). Extra arguments go to
# ctest, e.g. ./test.sh -R Runner
set -euo pipefail
KIT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$KIT_DIR/build.sh"
cd "$KIT_DIR/build"
exec nice -n 10 ctest --output-on-failure --parallel 2 "$@"
