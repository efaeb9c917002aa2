#!/usr/bin/env bash
# Get the stdio sample bots ready: compile the C bot (c/bot), and install what the others
# run on when it is missing, from Debian's packages: jq for jq/bot.sh, perl (with its
# core JSON::PP) for perl/bot.pl. Idempotent; runs from any directory.
#
# Environment: CC, the C compiler (default: cc).
set -euo pipefail

KIT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# One build of this kit at a time (tests on two workers, a second terminal): wait for
# the one running; it leaves nothing for this one to redo.
if command -v flock >/dev/null 2>&1; then exec 9>"$KIT_DIR/.build.lock"; flock 9; fi
die() {
    echo "build.sh: ERROR: $*" >&2
    exit 1
}
say() { echo "build.sh: $*"; }

missing=()
command -v jq >/dev/null 2>&1 || missing+=(jq)
perl -MJSON::PP -e1 >/dev/null 2>&1 || missing+=(perl)
command -v "${CC:-cc}" >/dev/null 2>&1 || missing+=(gcc libc6-dev)
if ((${#missing[@]})); then
    # A build installs nothing: the prerequisites are the machine's (scripts/system-packages
    # installs them for the project's tests).
    die "missing prerequisites: ${missing[*]}. On Debian or Ubuntu:
    sudo apt-get install -y --no-install-recommends ${missing[*]}"
fi
perl -MJSON::PP -e1 || die "perl cannot load JSON::PP"

"${CC:-cc}" -std=c99 -O2 -Wall -Wextra -Wpedantic -Wshadow -Werror \
    -o "$KIT_DIR/c/bot" "$KIT_DIR/c/bot.c" || die "compiling c/bot.c failed"
say "ready: c/bot ($("${CC:-cc}" --version | head -n1)), $(jq --version), perl $(perl -e 'print $^V')"
