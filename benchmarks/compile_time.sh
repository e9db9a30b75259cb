#!/usr/bin/env bash
# What including tdbg costs a user's file, measured in one run. Each translation unit of
# benchmarks/compile_time/ is compiled at -O2 with the project's compiler, header-only and with
# TDBG_SEPARATE_COMPILATION; then the engine's defining files of separate compilation: each
# part of tdbg/src/ (CMake's tdbg::compiled compiles them in parallel) and all of them in one
# file (tdbg/src.hpp). Prints the compiler's CPU seconds (user + system, best of N runs: CPU
# time moves less than wall time on a shared machine), the ratio to the file that uses only
# xtensor/xarray.hpp (compiled again before each other file; its least time is the yardstick),
# and object sizes; then whether each target holds:
#   separate compilation: the hook and trial+rule files <= 1.5x the xtensor-only file;
#   header-only:          the hook and trial+rule files <= 6x;
#   the defining files:   each part of tdbg/src/ <= 16x, what the minimal hook file cost
#                         before the engine was compiled once (35 s against 2.15 s).
#
# Usage: benchmarks/compile_time.sh [--runs N] [--std 17|20] [--cxx COMPILER]
# Environment: CXX (default c++), CXXFLAGS (added to -O2 -std=c++17).
# Exit status: 0 when every target holds, 1 otherwise (the numbers are printed either way).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

runs=3
std=17
cxx=${CXX:-c++}
while (($# > 0)); do
    case $1 in
    --runs) runs=$2; shift ;;
    --std) std=$2; shift ;;
    --cxx) cxx=$2; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
for tool in bc size; do
    command -v "$tool" >/dev/null || { echo "error: $tool is needed (Debian: bc, binutils)" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2206 # CXXFLAGS is a list of flags
flags=(-O2 "-std=c++$std" -I"$repo/include" ${CXXFLAGS:-})

# cpu_seconds <object> <compiler arguments...>: the least CPU time of $runs compilations
# ($repeat of them when set).
cpu_seconds() {
    local object=$1 best="" took
    shift
    for ((i = 0; i < ${repeat:-$runs}; ++i)); do
        took=$({ TIMEFORMAT='%U %S'; time "$cxx" "${flags[@]}" "$@" -c -o "$object"; } 2>&1 | tail -1 |
            awk '{ print $1 + $2 }')
        if [[ -z $best ]] || (($(echo "$took < $best" | bc -l))); then
            best=$took
        fi
    done
    echo "$best"
}

object_bytes() { size "$1" | awk 'NR == 2 { print $1 + $2 }'; }

# The yardstick takes about a second, so a moment of noise on the machine moves it, and with it
# every ratio, more than it moves the others: it is compiled again before each of the other
# files, and its least time over the whole run is the one the ratios divide by.
base=""
yardstick() {
    local took
    took=$(repeat=${1:-1} cpu_seconds "$work/xtensor_only.o" "$here/compile_time/xtensor_only.cpp")
    if [[ -z $base ]] || (($(echo "$took < $base" | bc -l))); then
        base=$took
    fi
}

# measure <label> <mode> <object> <limit, or - for none> <compiler arguments...>: compiles one
# file (after the yardstick once more) and keeps its row for the table printed at the end.
labels=() modes=() seconds=() objects=() limits=()
measure() {
    local label=$1 mode=$2 object=$3 limit=$4
    shift 4
    yardstick
    labels+=("$label") modes+=("$mode") objects+=("$object") limits+=("$limit")
    seconds+=("$(cpu_seconds "$object" "$@")")
}

echo "compiler: $("$cxx" --version | head -1); flags: ${flags[*]}; CPU seconds, best of $runs runs"
yardstick "$runs"

for tu in hook_minimal trial_rule custom_rule; do
    for mode in header-only separate; do
        defines=()
        [[ $mode == separate ]] && defines=(-DTDBG_SEPARATE_COMPILATION)
        limit=-
        if [[ $tu != custom_rule ]]; then
            limit=$([[ $mode == separate ]] && echo 1.5 || echo 6)
        fi
        measure "$tu.cpp" "$mode" "$work/$tu.$mode.o" "$limit" "${defines[@]}" "$here/compile_time/$tu.cpp"
    done
done
for part in "$repo"/include/tdbg/src/*.hpp; do
    name=$(basename "$part" .hpp)
    echo "#include <tdbg/src/$name.hpp>" >"$work/part_$name.cpp"
    measure "tdbg/src/$name.hpp" "engine part" "$work/part_$name.o" 16 -DTDBG_SEPARATE_COMPILATION \
        "$work/part_$name.cpp"
done
echo "#include <tdbg/src.hpp>" >"$work/engine.cpp"
measure "tdbg/src.hpp (one file)" "engine, once" "$work/engine.o" - -DTDBG_SEPARATE_COMPILATION "$work/engine.cpp"
yardstick

# row <label> <mode> <seconds> <object>: prints a line; sets `ratio`.
row() {
    ratio=$(printf '%.2f' "$(echo "$3 / $base" | bc -l)")
    printf '%-34s %-16s %9.2f %7.2fx %12s\n' "$1" "$2" "$3" "$ratio" "$(object_bytes "$4")"
}
failed=false
checks=()
printf '\n%-34s %-16s %9s %8s %12s\n' "translation unit" "mode" "seconds" "ratio" "object bytes"
row "xtensor/xarray.hpp only" "-" "$base" "$work/xtensor_only.o"
total=0
for i in "${!labels[@]}"; do
    if [[ ${modes[i]} == "engine, once" ]]; then
        printf '%-34s %-16s %9.2f\n' "  the parts together" "engine, CPU" "$total"
    fi
    row "${labels[i]}" "${modes[i]}" "${seconds[i]}" "${objects[i]}"
    if [[ ${modes[i]} == "engine part" ]]; then
        total=$(echo "$total + ${seconds[i]}" | bc -l)
    fi
    if [[ ${limits[i]} != - ]]; then
        what="${labels[i]}, ${modes[i]} (x xtensor-only)"
        [[ ${modes[i]} == "engine part" ]] && what="${labels[i]}, the engine's part (x xtensor-only)"
        if (($(echo "$ratio <= ${limits[i]}" | bc -l))); then
            checks+=("  met      $what: $ratio <= ${limits[i]}")
        else
            checks+=("  MISSED   $what: $ratio > ${limits[i]}")
            failed=true
        fi
    fi
done

printf '\ntargets:\n'
printf '%s\n' "${checks[@]}"
if $failed; then
    exit 1
fi
