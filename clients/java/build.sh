#!/usr/bin/env bash
# Builds the Java kit: generates the protobuf classes from ../../proto (protoc from Maven
# Central), compiles the client library and the sample bot, and packs the runnable jar
# target/pusoy-bot.jar that ./bot starts. Dependencies come from Maven Central into the
# default local repository (~/.m2), so later builds reuse them.
#
# Usage: ./build.sh [--force]   (from any directory; --force or FORCE=1 rebuilds even
# when the jar is newer than every source)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
# shellcheck source=toolchain.sh
source "$here/toolchain.sh"
check_toolchain

force="${FORCE:-0}"
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    *) echo "usage: $0 [--force]" >&2; exit 64 ;;
  esac
done

jar="$here/target/pusoy-bot.jar"
proto="$here/../../proto"
[[ -d "$proto" ]] || { echo "error: no proto directory at $proto" >&2; exit 1; }

# Up to date when the jar is newer than the build files, the sources and the .proto files.
if [[ "$force" != 1 && -f "$jar" ]] \
  && [[ -z "$(find pom.xml .mvn src "$proto" -newer "$jar" -print -quit)" ]]; then
  echo "build.sh: $jar is up to date"
  exit 0
fi

# Tests are run by test.sh; here they are compiled but not run.
nice -n 10 mvn -B -q package -DskipTests \
  -Dorg.slf4j.simpleLogger.log.org.apache.maven.plugin.surefire=warn
[[ -f "$jar" ]] || { echo "error: the build did not produce $jar" >&2; exit 1; }
echo "build.sh: built $jar"
