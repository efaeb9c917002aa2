# Sourced by build.sh and test.sh (with $here set to this folder): finds cargo, and puts
# cargo's intermediate files (the compiled dependencies, the build script's output) in
# the per-user build cache of ../build-cache.sh (build.build-dir, cargo 1.91+), so a new
# clone compiles only this kit's own two crates. The programs stay in target/release.
#
# Cargo decides what is fresh from file times, which cannot tell two clones' sources
# apart. So one build at a time uses that folder (take_build_dir holds its lock until the
# calling script ends or calls release_build_dir), and when another clone built there
# last, this kit's own crates are cleaned first: they are compiled from this clone's
# sources, and only the dependencies (crates.io's, fixed by Cargo.lock) are reused.

# rustup installs to ~/.cargo/bin, which a non-login shell may not have on PATH.
if ! command -v cargo >/dev/null 2>&1 && [ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]; then
    PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
fi
export CARGO_TARGET_DIR="$here/target"

take_build_dir() {
    local cargo_minor cache owner
    cargo_minor="$(cargo --version | sed -nE 's/^cargo 1\.([0-9]+).*/\1/p')"
    if [[ -z "$cargo_minor" || "$cargo_minor" -lt 91 ]]; then
        unset CARGO_BUILD_BUILD_DIR # older cargo: everything in target/, as before
        return
    fi
    # shellcheck source=../build-cache.sh
    source "$here/../build-cache.sh"
    cache="$(kit_cache rust "$here")"
    export CARGO_BUILD_BUILD_DIR="$cache/build"
    if command -v flock >/dev/null 2>&1; then
        exec 8>"$cache/build.lock"
        flock 8
    fi
    owner="$cache/build.owner"
    if [[ "$(cat "$owner" 2>/dev/null || true)" != "$here" ]]; then
        if [[ -d "$CARGO_BUILD_BUILD_DIR" ]]; then
            echo "rust kit: another clone built last in $CARGO_BUILD_BUILD_DIR: recompiling this kit's crates"
            nice -n 10 cargo clean --quiet --release --manifest-path "$here/Cargo.toml" \
                -p pusoy-client -p sample-bot
        fi
        echo "$here" >"$owner"
    fi
}

release_build_dir() {
    exec 8>&-
}
