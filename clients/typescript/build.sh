#!/usr/bin/env bash
# Builds the TypeScript kit from any directory:
#   1. npm ci: the exact dependencies of package-lock.json, from the npm registry;
#   2. buf generate: TypeScript for ../../proto (buf + ts-proto, both from npm) into src/gen;
#   3. tsc: the client library (src/lib), the sample bot (src/bot) and the tests into dist.
# Idempotent; node_modules, src/gen and dist are build outputs (gitignored); npm's and
# buf's caches are in the per-user build cache (../build-cache.sh), shared by every clone.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# One build of this kit at a time (tests on two workers, a second terminal): wait for
# the one running; it leaves nothing for this one to redo.
if command -v flock >/dev/null 2>&1; then exec 9>"$here/.build.lock"; flock 9; fi
cd "$here"

die() {
  echo "build.sh: error: $*" >&2
  exit 1
}

# --- toolchain -------------------------------------------------------------------------
command -v node >/dev/null 2>&1 ||
  die "node is not installed. This kit needs Node.js 20 or newer with npm (e.g. 'apt-get install nodejs npm' or https://nodejs.org)."
node_major="$(node -p 'process.versions.node.split(".")[0]')"
((node_major >= 20)) || die "Node.js $(node --version) is too old: this kit needs Node.js 20 or newer."
command -v npm >/dev/null 2>&1 || die "npm is not installed (it comes with Node.js; on Debian: 'apt-get install npm')."
[[ -d ../../proto/pusoy/referee/v1 ]] || die "../../proto/pusoy/referee/v1 is missing: run this from a checkout of pusoy-referee."

# shellcheck source=../build-cache.sh
source "$here/../build-cache.sh"
cache="$(kit_cache typescript "$here")"

# --- dependencies (cached: skipped while package-lock.json is unchanged) ---------------
stamp="node_modules/.kit-lock.sha256"
want="$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x node_modules/.bin/buf && -x node_modules/.bin/tsc ]]; then
  echo "== dependencies: up to date (node_modules)"
else
  echo "== dependencies: npm ci"
  # No package here needs an install script (buf's binary comes in its platform package).
  nice -n 10 npm ci --ignore-scripts --no-audit --no-fund --prefer-offline --cache "$cache/npm" ||
    die "npm ci failed (is the npm registry reachable?)"
  echo "$want" >"$stamp"
fi

# --- code generation from ../../proto ---------------------------------------------------
echo "== generate: buf generate ../../proto -> src/gen (ts-proto $(node -p 'require("ts-proto/package.json").version'), buf $(node_modules/.bin/buf --version))"
BUF_CACHE_DIR="$cache/buf" nice -n 10 node_modules/.bin/buf generate ||
  die "code generation from ../../proto failed"

# --- compile ---------------------------------------------------------------------------
echo "== compile: tsc $(node_modules/.bin/tsc --version)"
# Compiled files of removed sources must not run (tsc never deletes an output).
for js in dist/src/*/*.js dist/test/*.js; do
  [[ -e "$js" ]] || continue
  src="${js#dist/}"
  [[ -f "${src%.js}.ts" ]] || rm -f "${js%.js}".*
done
nice -n 10 node_modules/.bin/tsc -p tsconfig.json || die "tsc failed"

chmod +x bot build.sh test.sh
echo "== built: library dist/src/lib, sample bot $here/bot"
