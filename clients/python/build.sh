#!/usr/bin/env bash
# Python kit: installs the referee and the pusoy_client library into the repository's
# .venv, and checks that the generated stubs (referee/proto, made by grpcio-tools from
# ../../proto) match the .proto files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# One build of this kit at a time (tests on two workers, a second terminal): wait for
# the one running; it leaves nothing for this one to redo.
if command -v flock >/dev/null 2>&1; then exec 9>"$here/.build.lock"; flock 9; fi
root="$(cd "$here/../.." && pwd)"
command -v python3 >/dev/null || { echo "python3 is not installed: the Python kit needs Python 3.11+" >&2; exit 1; }
"$root/scripts/setup"
"$root/.venv/bin/python" "$root/scripts/gen_proto.py" --check
