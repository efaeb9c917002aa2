#!/usr/bin/env bash
# Builds the Java kit: generates the protobuf classes and the gRPC stubs from ../../proto
# (protoc and protoc-gen-grpc-java from Maven Central), compiles the client library, the
# sample bot and the conformance bot, and packs the runnable jar target/pusoy-bot.jar that
# ./bot starts. Then it records a class-data-sharing archive of the classes a bot loads
# (target/pusoy-bot.jsa, JDK's AppCDS), which cuts a bot's start-up CPU by more than half.
# Dependencies come from Maven Central into the default local repository (~/.m2), so later
# builds reuse them.
#
# Usage: ./build.sh [--force]   (from any directory; --force or FORCE=1 rebuilds even
# when the jar is newer than every source)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# One build of this kit at a time (tests on two workers, a second terminal): wait for
# the one running; it leaves nothing for this one to redo.
if command -v flock >/dev/null 2>&1; then exec 9>"$here/.build.lock"; flock 9; fi
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
jsa="$here/target/pusoy-bot.jsa"
proto="$here/../../proto"
[[ -d "$proto" ]] || { echo "error: no proto directory at $proto" >&2; exit 1; }

# Up to date when the jar is newer than the build files, the sources and the .proto files.
if [[ "$force" != 1 && -f "$jar" ]] \
  && [[ -z "$(find pom.xml .mvn src "$proto" -newer "$jar" -print -quit)" ]]; then
  echo "build.sh: $jar is up to date"
else
  # Tests are run by test.sh; here they are compiled but not run.
  nice -n 10 mvn -B -q package -DskipTests \
    -Dorg.slf4j.simpleLogger.log.org.apache.maven.plugin.surefire=warn
  [[ -f "$jar" ]] || { echo "error: the build did not produce $jar" >&2; exit 1; }
  echo "build.sh: built $jar"
fi
[[ -f "$jsa" && "$jsa" -nt "$jar" ]] && exit 0

# The class-data-sharing archive: a training run of the bot (against a loopback port where
# nothing listens, so it loads gRPC, Netty and protobuf, then exits 3) records the classes
# it loaded. It is tied to this jar and this JVM; a JVM that cannot use it ignores it.
rm -f "$jsa"
PUSOY_TOKEN=training PUSOY_ADDRESS=127.0.0.1:1 PUSOY_RECONNECT_WINDOW_MS=200 \
  nice -n 10 java -XX:ArchiveClassesAtExit="$jsa" -XX:+UseSerialGC -Xlog:cds=off -Xlog:cds+dynamic=off \
  -cp "$jar" io.pusoyreferee.sample.Main >/dev/null 2>&1 || true
if [[ -f "$jsa" ]]; then
  echo "build.sh: recorded $jsa"
else
  echo "build.sh: warning: no class-data-sharing archive (the bot starts slower without it)" >&2
fi
