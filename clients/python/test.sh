#!/usr/bin/env bash
# The Python kit's tests: its unit tests (pytest), then the shared conformance suite
# (clients/conformance) against the kit's conformance bot.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
"$root/.venv/bin/pytest" -q -p no:cacheprovider "$here/tests"
export PUSOY_CONFORMANCE_PYTHON="${PUSOY_CONFORMANCE_PYTHON:-$root/.venv/bin/python}"
exec "$root/clients/conformance/run" --bot "$root/.venv/bin/python $here/conformance_bot.py" --features tls batched_events -- "$@"
