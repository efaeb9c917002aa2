# Sourced by the kits' build.sh and test.sh (and tests/docs/test_first_bot.py): the one
# place where the kits keep what their toolchains can reuse between builds and between
# clones of pusoy-referee on this machine, outside the clone:
#
#   ${PUSOY_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pusoy-referee/kits}/<kit>/
#
#   go/           Go's module cache (mod/), build cache (build/), the protoc plugins (tools/)
#   rust/         cargo's intermediate build files (build/: compiled dependencies)
#   cpp/          ccache's compiled objects (ccache/)
#   typescript/   npm's download cache (npm/)
#   first-bot/    docs/first-bot.md's test: grpcurl and npm's cache
#
# Every toolchain checks what it reuses (Go's and ccache's caches are keyed by the
# contents of the inputs; the Rust kit rebuilds its own crates when another clone built
# last), so a build from a cache is the build from nothing, faster. Nothing there is
# needed: delete the folder (or one kit's) and the next build downloads and compiles
# again. When it cannot be made or written, a kit keeps its cache in its own .cache/.

# kit_cache KIT KIT_DIR: the kit's cache folder (made when missing), on stdout.
kit_cache() {
    local kit=$1 kit_dir=$2 root dir
    root="${PUSOY_BUILD_CACHE:-}"
    if [[ -z "$root" && -n "${XDG_CACHE_HOME:-}" ]]; then
        root="$XDG_CACHE_HOME/pusoy-referee/kits"
    elif [[ -z "$root" && -n "${HOME:-}" ]]; then
        root="$HOME/.cache/pusoy-referee/kits"
    fi
    dir="$root/$kit"
    if [[ -z "$root" ]] || ! mkdir -p "$dir" 2>/dev/null || [[ ! -w "$dir" ]]; then
        echo "$kit kit: cannot use the build cache ${root:-(no HOME)}; caching in $kit_dir/.cache" >&2
        dir="$kit_dir/.cache"
        mkdir -p "$dir"
    fi
    (cd "$dir" && pwd)
}
