# Sourced by build.sh and test.sh: checks that Java 17+ (a JDK) and Maven 3.8+ are on PATH,
# and fails loudly, saying what to install, when they are not.

toolchain_fail() {
  echo "error: $*" >&2
  echo "The Java kit needs a JDK 17 or newer and Maven 3.8 or newer on PATH" >&2
  echo "(on Debian: apt-get install openjdk-17-jdk-headless maven)." >&2
  exit 1
}

check_toolchain() {
  command -v java >/dev/null 2>&1 || toolchain_fail "java is not on PATH"
  command -v javac >/dev/null 2>&1 || toolchain_fail "javac is not on PATH (a JRE alone cannot build)"
  command -v mvn >/dev/null 2>&1 || toolchain_fail "mvn (Apache Maven) is not on PATH"

  local java_version java_major
  java_version="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p')"
  java_major="${java_version%%.*}"
  if [[ -z "$java_major" || ! "$java_major" =~ ^[0-9]+$ ]]; then
    toolchain_fail "could not read the Java version from 'java -version'"
  fi
  if (( java_major < 17 )); then
    toolchain_fail "Java $java_version found; Java 17 or newer is needed"
  fi

  local mvn_version mvn_major mvn_minor
  mvn_version="$(mvn -v 2>/dev/null | sed -n 's/.*Apache Maven \([0-9][0-9.]*\).*/\1/p' | head -n 1)"
  [[ -n "$mvn_version" ]] || toolchain_fail "could not read the Maven version from 'mvn -v'"
  mvn_major="${mvn_version%%.*}"
  mvn_minor="$(echo "$mvn_version" | cut -d. -f2)"
  if (( mvn_major < 3 || (mvn_major == 3 && mvn_minor < 8) )); then
    toolchain_fail "Maven $mvn_version found; Maven 3.8 or newer is needed"
  fi
}
