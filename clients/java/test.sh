#!/usr/bin/env bash
# Runs the unit tests of the Java kit (JUnit 5 through Maven Surefire, which prints its
# "Tests run: ..." summary). Generates the protobuf classes first if needed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
# shellcheck source=toolchain.sh
source "$here/toolchain.sh"
check_toolchain

nice -n 10 mvn -B -q test "$@"
