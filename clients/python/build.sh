#!/usr/bin/env bash
# Python kit: installs the referee and the pusoy_client library into the repository's
# .venv, and checks that the generated stubs (referee/proto, made by grpcio-tools from
# ../../proto) match the .proto files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
command -v python3 >/dev/null || { echo "python3 is not installed: the Python kit needs Python 3.11+" >&2; exit 1; }
"$root/scripts/setup"
"$root/.venv/bin/python" "$root/scripts/gen_proto.py" --check
