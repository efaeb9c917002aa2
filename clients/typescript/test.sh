#!/usr/bin/env bash
# Unit tests of the TypeScript kit with node's built-in test runner (node --test).
# Builds first (build.sh is cached and quick when nothing changed).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/build.sh"
cd "$here"
echo "== test: node --test dist/test/"
exec node --test --test-reporter=spec dist/test/
