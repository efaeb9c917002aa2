#!/usr/bin/env bash
# The TypeScript kit's tests: its unit tests (node --test), then the shared conformance
# suite (clients/conformance) against the kit's conformance bot. Builds first (build.sh
# is cached and quick when nothing changed). Extra arguments name transcripts.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/build.sh"
cd "$here"
echo "== test: node --test dist/test/"
node --test --test-reporter=spec dist/test/
echo "== conformance: clients/conformance/run"
exec "$here/../conformance/run" --bot "node $here/dist/src/conformance/main.js" --features tls batched_events -- "$@"
