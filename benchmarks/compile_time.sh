#!/usr/bin/env bash
# What including tdbg costs a user's file, measured in one run: each translation unit
# of benchmarks/compile_time/ compiled at -O2 with the project's compiler, header-only
# and with TDBG_SEPARATE_COMPILATION, plus the one-time cost of the engine's defining
# file (tdbg/src.hpp). Prints seconds (best of N runs), the ratio to the file that
# includes only xtensor/xarray.hpp, object sizes, and whether each target holds:
#   separate compilation: hook and trial+rule files <= 1.5x the xtensor-only file;
#   header-only:          hook and trial+rule files <= 6x;
#   the defining file:    <= 35 s.
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

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2206 # CXXFLAGS is a list of flags
flags=(-O2 "-std=c++$std" -I"$repo/include" ${CXXFLAGS:-})

# best_seconds <object> <compiler arguments...>: the fastest of $runs compilations.
best_seconds() {
    local object=$1 best="" start end took
    shift
    for ((i = 0; i < runs; ++i)); do
        start=$(date +%s.%N)
        "$cxx" "${flags[@]}" "$@" -c -o "$object"
        end=$(date +%s.%N)
        took=$(echo "$end - $start" | bc -l)
        if [[ -z $best ]] || (($(echo "$took < $best" | bc -l))); then
            best=$took
        fi
    done
    echo "$best"
}

object_bytes() { size "$1" | awk 'NR == 2 { print $1 + $2 }'; }

echo "compiler: $("$cxx" --version | head -1); flags: ${flags[*]}; best of $runs runs"
base=$(best_seconds "$work/xtensor_only.o" "$here/compile_time/xtensor_only.cpp")
printf '\n%-28s %-22s %9s %8s %12s\n' "translation unit" "mode" "seconds" "ratio" "object bytes"
printf '%-28s %-22s %9.2f %7.2fx %12s\n' "xtensor/xarray.hpp only" "-" "$base" 1 "$(object_bytes "$work/xtensor_only.o")"

failed=false
# check <ratio or seconds> <limit> <what>
check() {
    if (($(echo "$1 <= $2" | bc -l))); then
        checks+=("  met      $3: $1 <= $2")
    else
        checks+=("  MISSED   $3: $1 > $2")
        failed=true
    fi
}
checks=()
for tu in hook_minimal trial_rule custom_rule; do
    for mode in header-only separate; do
        defines=()
        [[ $mode == separate ]] && defines=(-DTDBG_SEPARATE_COMPILATION)
        seconds=$(best_seconds "$work/$tu.$mode.o" "${defines[@]}" "$here/compile_time/$tu.cpp")
        ratio=$(echo "$seconds / $base" | bc -l)
        printf '%-28s %-22s %9.2f %7.2fx %12s\n' "$tu.cpp" "$mode" "$seconds" "$ratio" "$(object_bytes "$work/$tu.$mode.o")"
        if [[ $tu != custom_rule ]]; then
            check "$(printf '%.2f' "$ratio")" "$([[ $mode == separate ]] && echo 1.5 || echo 6)" "$tu, $mode (x xtensor-only)"
        fi
    done
done
seconds=$(best_seconds "$work/engine.o" -DTDBG_SEPARATE_COMPILATION "$here/compile_time/engine.cpp")
printf '%-28s %-22s %9.2f %7.2fx %12s\n' "engine.cpp (tdbg/src.hpp)" "separate, once" "$seconds" \
    "$(echo "$seconds / $base" | bc -l)" "$(object_bytes "$work/engine.o")"
check "$(printf '%.2f' "$seconds")" 35 "the defining file, seconds"

printf '\ntargets:\n'
printf '%s\n' "${checks[@]}"
if $failed; then
    exit 1
fi
