#!/usr/bin/env bash
# Unit tests of the Python client library (pytest).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
exec "$root/.venv/bin/pytest" -q -p no:cacheprovider "$here/tests"
