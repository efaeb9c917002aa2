#!/usr/bin/env bash
# usage: bench/count_duplicates.sh [DUPLICATES-OPTIONS...]
#
# Issue 32's measure of the house: the pairs of places in referee/ that repeat six lines or
# more (the workplace's `duplicates` tool, which must be on PATH), without the generated
# code: referee/proto, *_pb2*, and referee/view/assets/viewer.js (the join of
# viewer/*.js that scripts/build_viewer.py writes). Reads this checkout's working tree.
#   bench/count_duplicates.sh              the count and the first rows
#   bench/count_duplicates.sh --most 100   every row
set -euo pipefail
case "${1-}" in
  -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac
command -v duplicates >/dev/null || { echo "bench/count_duplicates.sh: no duplicates tool on PATH" >&2; exit 2; }
cd "$(dirname "$0")/.."
copy=$(mktemp -d); trap 'rm -rf "$copy"' EXIT
tar -cf - --exclude='__pycache__' referee | tar -xf - -C "$copy"
rm -rf "$copy/referee/proto" "$copy/referee/view/assets/viewer.js"
find "$copy" -name '*_pb2*' -delete
cd "$copy" && duplicates --seconds 300 "$@"
