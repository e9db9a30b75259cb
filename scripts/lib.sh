# shellcheck shell=bash disable=SC2034 # sets variables for the scripts that source it
# Helpers shared by tdbg's scripts; sourced, not run.

TDBG_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/deps.sh
source "$TDBG_REPO/scripts/deps.sh"

# Where the build trees go (TDBG_BUILD_DIR overrides) and how many jobs build and test use.
TDBG_BUILD_ROOT=${TDBG_BUILD_DIR:-$TDBG_REPO/build}
TDBG_JOBS=${TDBG_JOBS:-2}

# The linker flag of the scripts' builds: GNU gold (part of binutils) links the test programs
# in about half the time of the default linker; the default when gold is missing.
TDBG_LINKER_FLAGS=""
if command -v ld.gold >/dev/null 2>&1; then
    TDBG_LINKER_FLAGS=-fuse-ld=gold
fi

tdbg_say() { printf '\n==> %s\n' "$*"; }

# Seconds as "1m05s".
tdbg_duration() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# tdbg_configure <build dir> <cmake arguments>...: Ninja when available, else Makefiles; a
# tree configured with the other generator is started afresh. TDBG_SHARED_DIR (the
# reference fixtures) and TDBG_TEST_AREAS (a developer's subset) are passed on when set.
tdbg_configure() {
    local dir=$1 generator=("Unix Makefiles")
    shift
    if command -v ninja >/dev/null 2>&1; then
        generator=(Ninja)
    fi
    if [[ -f $dir/CMakeCache.txt ]] && ! grep -qx "CMAKE_GENERATOR:INTERNAL=${generator[0]}" "$dir/CMakeCache.txt"; then
        echo "note: $dir was configured with another generator; starting it afresh"
        rm -rf "$dir"
    fi
    local extra=()
    if [[ -n ${TDBG_SHARED_DIR:-} ]]; then
        extra+=("-DTDBG_SHARED_DIR=$TDBG_SHARED_DIR")
    fi
    # Always passed, so that a subset asked for once does not stick in the cache.
    extra+=("-DTDBG_TEST_AREAS=${TDBG_TEST_AREAS:-}")
    # Not every tree uses every setting passed on (the demo builds no tests): no warning for that.
    cmake -S "$TDBG_REPO" -B "$dir" -G "${generator[0]}" --no-warn-unused-cli "${extra[@]}" "$@"
}

# tdbg_build <build dir> [cmake --build arguments]...: keeps going past the first error so
# one run shows every broken file.
tdbg_build() {
    local dir=$1 keep_going=-k
    shift
    if [[ -f $dir/build.ninja ]]; then
        keep_going="-k 0"
    fi
    # shellcheck disable=SC2086 # "-k 0" is two arguments
    cmake --build "$dir" --parallel "$TDBG_JOBS" "$@" -- $keep_going
}
