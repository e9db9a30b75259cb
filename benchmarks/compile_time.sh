#!/usr/bin/env bash
# What including tdbg costs a user's file, measured in one run. Each translation unit of
# benchmarks/compile_time/ is compiled at -O2 with the project's compiler, header-only and with
# TDBG_SEPARATE_COMPILATION; then the engine's defining files of separate compilation: each
# part of tdbg/src/ (CMake's tdbg::compiled compiles them in parallel) and all of them in one
# file (tdbg/src.hpp). Prints the compiler's CPU seconds (user + system, best of N runs: CPU
# time moves less than wall time on a shared machine), the ratio to the file that uses only
# xtensor/xarray.hpp, and object sizes; then whether each target holds:
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

# cpu_seconds <object> <compiler arguments...>: the least CPU time of $runs compilations.
cpu_seconds() {
    local object=$1 best="" took
    shift
    for ((i = 0; i < runs; ++i)); do
        took=$({ TIMEFORMAT='%U %S'; time "$cxx" "${flags[@]}" "$@" -c -o "$object"; } 2>&1 | tail -1 |
            awk '{ print $1 + $2 }')
        if [[ -z $best ]] || (($(echo "$took < $best" | bc -l))); then
            best=$took
        fi
    done
    echo "$best"
}

object_bytes() { size "$1" | awk 'NR == 2 { print $1 + $2 }'; }

failed=false
checks=()
# check <value> <limit> <what>
check() {
    if (($(echo "$1 <= $2" | bc -l))); then
        checks+=("  met      $3: $1 <= $2")
    else
        checks+=("  MISSED   $3: $1 > $2")
        failed=true
    fi
}
# row <label> <mode> <seconds> <object>: prints a line; sets `ratio`.
row() {
    ratio=$(printf '%.2f' "$(echo "$3 / $base" | bc -l)")
    printf '%-34s %-16s %9.2f %7.2fx %12s\n' "$1" "$2" "$3" "$ratio" "$(object_bytes "$4")"
}

echo "compiler: $("$cxx" --version | head -1); flags: ${flags[*]}; CPU seconds, best of $runs runs"
base=$(cpu_seconds "$work/xtensor_only.o" "$here/compile_time/xtensor_only.cpp")
printf '\n%-34s %-16s %9s %8s %12s\n' "translation unit" "mode" "seconds" "ratio" "object bytes"
row "xtensor/xarray.hpp only" "-" "$base" "$work/xtensor_only.o"

for tu in hook_minimal trial_rule custom_rule; do
    for mode in header-only separate; do
        defines=()
        [[ $mode == separate ]] && defines=(-DTDBG_SEPARATE_COMPILATION)
        seconds=$(cpu_seconds "$work/$tu.$mode.o" "${defines[@]}" "$here/compile_time/$tu.cpp")
        row "$tu.cpp" "$mode" "$seconds" "$work/$tu.$mode.o"
        if [[ $tu != custom_rule ]]; then
            check "$ratio" "$([[ $mode == separate ]] && echo 1.5 || echo 6)" "$tu.cpp, $mode (x xtensor-only)"
        fi
    done
done

total=0
for part in "$repo"/include/tdbg/src/*.hpp; do
    name=$(basename "$part" .hpp)
    echo "#include <tdbg/src/$name.hpp>" >"$work/part_$name.cpp"
    seconds=$(cpu_seconds "$work/part_$name.o" -DTDBG_SEPARATE_COMPILATION "$work/part_$name.cpp")
    total=$(echo "$total + $seconds" | bc -l)
    row "tdbg/src/$name.hpp" "engine part" "$seconds" "$work/part_$name.o"
    check "$ratio" 16 "tdbg/src/$name.hpp, the engine's part (x xtensor-only)"
done
printf '%-34s %-16s %9.2f\n' "  the parts together" "engine, CPU" "$total"
echo "#include <tdbg/src.hpp>" >"$work/engine.cpp"
seconds=$(cpu_seconds "$work/engine.o" -DTDBG_SEPARATE_COMPILATION "$work/engine.cpp")
row "tdbg/src.hpp (one file)" "engine, once" "$seconds" "$work/engine.o"

printf '\ntargets:\n'
printf '%s\n' "${checks[@]}"
if $failed; then
    exit 1
fi
