#!/usr/bin/env bash
# The Java kit's tests: builds (./build.sh: the runnable jar and its class-data-sharing
# archive, skipped when the jar is newer than every source), then the unit tests (JUnit 5
# through Maven Surefire, which prints its "Tests run: ..." summary; comparator and
# tracker against clients/conformance's data; the classes build.sh compiled are up to
# date, so Maven only runs them), then the shared conformance suite (clients/conformance)
# against the kit's conformance bot, io.pusoyreferee.conformance.ConformanceBot in that jar.
#   ./test.sh                     everything
#   ./test.sh -Dtest=OptionsTest  extra arguments go to Maven (the suite still runs)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
"$here/build.sh" # checks the toolchain too

echo "== mvn test (the unit tests)"
nice -n 10 mvn -B -q test "$@"
echo "== conformance: clients/conformance/run"
# One transcript at a time: each starts a JVM, and JVMs starting side by side on a busy
# 2-core machine miss the suite's exit deadlines. As ./bot runs, with C1 only: short runs gain nothing
# from the optimising compiler on a busy machine.
exec "$here/../conformance/run" --jobs 1 --features tls batched_events \
  --bot "java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:SharedArchiveFile=$here/target/pusoy-bot.jsa -Xlog:cds=off -Xlog:cds+dynamic=off -cp $here/target/pusoy-bot.jar io.pusoyreferee.conformance.ConformanceBot"
