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
#   the defining files:   each part of tdbg/src/ <= 16x, what the minimal hook file cost
#                         before the engine was compiled once (35 s against 2.15 s).
# Header-only files have no target (they compile the engine they reach: 11-22x): they are
# guarded against regression instead, by --against.
#
# The libtorch integration, where libtorch's headers are found (--torch-include DIR, default
# Debian's /usr/include/torch/csrc/api/include; skipped without them): torch_only.cpp, a small
# libtorch trainer file, against torch_hook.cpp, the same file saving its model through a
# torch_hook, compiled in turn, best of N each; torch_hook.cpp with TDBG_SEPARATE_COMPILATION
# (the integration compiled once: tdbg::libtorch_compiled, tdbg::libtorch_engine) and, for
# information, header-only; then the integration's defining file (tdbg/integrations/src/
# libtorch.hpp). Target: torch_hook.cpp separately compiled <= 1.10x torch_only.cpp.
# --libtorch-only measures only these.
#
# --against REV compiles the same files of git revision REV (its include/ and
# benchmarks/compile_time/, taken with git archive) in turn with this tree's, and prints
# them side by side: CPU seconds, object bytes and the ratio now / REV; the guard: no user file,
# in either mode, more than 10% above REV. Then the engine's parts, all of them and the largest
# (what a parallel build waits for), measured after this tree's: for information, each part
# being held to its own target.
#
# Usage: benchmarks/compile_time.sh [--runs N] [--std 17|20] [--cxx COMPILER] [--against REV]
#                                   [--torch-include DIR] [--libtorch-only]
# Environment: CXX (default c++), CXXFLAGS (added to -O2 -std=c++17).
# Exit status: 0 when every target and guard holds, 1 otherwise (the numbers are printed
# either way).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

runs=3
std=17
cxx=${CXX:-c++}
against=""
torch_include=/usr/include/torch/csrc/api/include
libtorch_only=false
while (($# > 0)); do
    case $1 in
    --runs) runs=$2; shift ;;
    --std) std=$2; shift ;;
    --cxx) cxx=$2; shift ;;
    --against) against=$2; shift ;;
    --torch-include) torch_include=$2; shift ;;
    --libtorch-only) libtorch_only=true ;;
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
flags=(-O2 "-std=c++$std" ${CXXFLAGS:-})
# The tree being measured: this one, or REV's copy while its files are compiled.
include_dir=$repo/include
if [[ -n $against ]]; then
    mkdir "$work/against"
    git -C "$repo" archive "$against" include benchmarks/compile_time | tar -x -C "$work/against" ||
        { echo "error: cannot take include/ and benchmarks/compile_time/ of '$against' (git archive)" >&2; exit 2; }
    against_name=$(git -C "$repo" rev-parse --short "$against")
fi

# cpu_seconds <object> <compiler arguments...>: the least CPU time of $runs compilations
# ($repeat of them when set). A compilation that fails is written to $work/failed, which
# compiled() then reports (this runs in a subshell, which cannot end the script).
cpu_seconds() {
    local object=$1 best="" took
    shift
    for ((i = 0; i < ${repeat:-$runs}; ++i)); do
        rm -f "$object"
        took=$({ TIMEFORMAT='%U %S'; time "$cxx" "${flags[@]}" -I"$include_dir" "$@" -c -o "$object"; } 2>&1 | tail -1 |
            awk '{ print $1 + $2 }')
        if [[ ! -s $object ]]; then
            echo "error: $cxx could not compile ${*: -1} (with -I$include_dir); run it alone to see why" >"$work/failed"
            return
        fi
        if [[ -z $best ]] || (($(echo "$took < $best" | bc -l))); then
            best=$took
        fi
    done
    echo "$best"
}

object_bytes() { size "$1" | awk 'NR == 2 { print $1 + $2 }'; }

# compiled: ends the script, saying which, when a compilation failed (a time without its
# object would otherwise pass for a measure).
compiled() {
    if [[ -e $work/failed ]]; then
        cat "$work/failed" >&2
        exit 2
    fi
}

# The yardstick takes about a second, so a moment of noise on the machine moves it, and with it
# every ratio, more than it moves the others: it is compiled again before each of the other
# files, and its least time over the whole run is the one the ratios divide by.
base=""
yardstick() {
    local took
    took=$(repeat=${1:-1} cpu_seconds "$work/xtensor_only.o" "$here/compile_time/xtensor_only.cpp")
    compiled
    if [[ -z $base ]] || (($(echo "$took < $base" | bc -l))); then
        base=$took
    fi
}

# least <a> <b>: the smaller of two times, either of which may be empty.
least() {
    if [[ -z $1 ]] || { [[ -n $2 ]] && (($(echo "$2 < $1" | bc -l))); }; then
        echo "$2"
    else
        echo "$1"
    fi
}

# measure <label> <mode> <object> <limit, or - for none> <compiler arguments..., the source
# last>: compiles one file (after the yardstick once more) and keeps its row for the table
# printed at the end. With `against_source` set (--against), REV's copy of the file is compiled
# in turn with it, one run each (a change in the machine's load then reaches both alike), and
# kept for the side by side.
labels=() modes=() seconds=() objects=() limits=()
against_seconds=() against_objects=()
measure() {
    local label=$1 mode=$2 object=$3 limit=$4 best="" best_against="" r
    shift 4
    yardstick
    labels+=("$label") modes+=("$mode") objects+=("$object") limits+=("$limit")
    for ((r = 0; r < runs; ++r)); do
        best=$(least "$best" "$(repeat=1 cpu_seconds "$object" "$@")")
        if [[ -n ${against_source:-} ]]; then
            best_against=$(least "$best_against" "$(repeat=1 include_dir=$work/against/include \
                cpu_seconds "$work/against.${object##*/}" "${@:1:$#-1}" "$against_source")")
        fi
    done
    compiled
    seconds+=("$best")
    if [[ -n ${against_source:-} ]]; then
        against_seconds+=("$best_against") against_objects+=("$work/against.${object##*/}")
    fi
}

# libtorch_case: the libtorch integration's files (see the top), its table, and its target in
# `checks` (setting `failed` when missed).
libtorch_case() {
    if [[ ! -e $torch_include/torch/torch.h ]]; then
        checks+=("  skipped  the libtorch integration: no torch/torch.h in $torch_include (--torch-include DIR)")
        return
    fi
    local torch=(-isystem "$torch_include") only="" separate="" header_only="" part ratio r
    for ((r = 0; r < runs; ++r)); do
        only=$(least "$only" "$(repeat=1 cpu_seconds "$work/torch_only.o" "${torch[@]}" "$here/compile_time/torch_only.cpp")")
        separate=$(least "$separate" "$(repeat=1 cpu_seconds "$work/torch_hook.separate.o" "${torch[@]}" \
            -DTDBG_SEPARATE_COMPILATION "$here/compile_time/torch_hook.cpp")")
        header_only=$(least "$header_only" "$(repeat=1 cpu_seconds "$work/torch_hook.header-only.o" "${torch[@]}" \
            "$here/compile_time/torch_hook.cpp")")
        compiled
    done
    echo "#include <tdbg/integrations/src/libtorch.hpp>" >"$work/libtorch_part.cpp"
    part=$(cpu_seconds "$work/libtorch_part.o" "${torch[@]}" -DTDBG_SEPARATE_COMPILATION "$work/libtorch_part.cpp")
    compiled
    printf '\n%-42s %-16s %9s %8s %12s\n' "libtorch integration" "mode" "seconds" "ratio" "object bytes"
    for r in "torch_only.cpp|-|$only|$work/torch_only.o" \
        "torch_hook.cpp|separate|$separate|$work/torch_hook.separate.o" \
        "torch_hook.cpp|header-only|$header_only|$work/torch_hook.header-only.o" \
        "tdbg/integrations/src/libtorch.hpp|integration, once|$part|$work/libtorch_part.o"; do
        IFS='|' read -r -a fields <<<"$r"
        printf '%-42s %-16s %9.2f %7.2fx %12s\n' "${fields[0]}" "${fields[1]}" "${fields[2]}" \
            "$(echo "${fields[2]} / $only" | bc -l)" "$(object_bytes "${fields[3]}")"
    done
    ratio=$(printf '%.2f' "$(echo "$separate / $only" | bc -l)")
    if (($(echo "$ratio <= 1.10" | bc -l))); then
        checks+=("  met      torch_hook.cpp, separate (x torch_only.cpp): $ratio <= 1.10")
    else
        checks+=("  MISSED   torch_hook.cpp, separate (x torch_only.cpp): $ratio > 1.10")
        failed=true
    fi
}

# report: prints whether each target and guard holds; exits 1 when one does not.
report() {
    printf '\ntargets:\n'
    printf '%s\n' "${checks[@]}"
    if $failed; then
        exit 1
    fi
    exit 0
}

echo "compiler: $("$cxx" --version | head -1); flags: ${flags[*]}; CPU seconds, best of $runs runs"
failed=false
checks=()
if $libtorch_only; then
    libtorch_case
    report
fi
yardstick "$runs"

for tu in hook_minimal trial_rule custom_rule; do
    for mode in header-only separate; do
        defines=()
        [[ $mode == separate ]] && defines=(-DTDBG_SEPARATE_COMPILATION)
        limit=-
        if [[ $tu != custom_rule && $mode == separate ]]; then
            limit=1.5
        fi
        against_source=""
        [[ -n $against ]] && against_source=$work/against/benchmarks/compile_time/$tu.cpp
        measure "$tu.cpp" "$mode" "$work/$tu.$mode.o" "$limit" "${defines[@]}" "$here/compile_time/$tu.cpp"
    done
done
against_source=""
for part in "$repo"/include/tdbg/src/*.hpp; do
    name=$(basename "$part" .hpp)
    echo "#include <tdbg/src/$name.hpp>" >"$work/part_$name.cpp"
    measure "tdbg/src/$name.hpp" "engine part" "$work/part_$name.o" 16 -DTDBG_SEPARATE_COMPILATION \
        "$work/part_$name.cpp"
done
echo "#include <tdbg/src.hpp>" >"$work/engine.cpp"
measure "tdbg/src.hpp (one file)" "engine, once" "$work/engine.o" - -DTDBG_SEPARATE_COMPILATION "$work/engine.cpp"
# REV's parts (its tdbg/src/ may hold other files): their sum and the largest.
against_parts_total=0 against_largest=0 against_largest_name=""
if [[ -n $against ]]; then
    for part in "$work"/against/include/tdbg/src/*.hpp; do
        name=$(basename "$part" .hpp)
        echo "#include <tdbg/src/$name.hpp>" >"$work/against.part_$name.cpp"
        took=$(include_dir=$work/against/include cpu_seconds "$work/against.part_$name.o" -DTDBG_SEPARATE_COMPILATION \
            "$work/against.part_$name.cpp")
        compiled
        against_parts_total=$(echo "$against_parts_total + $took" | bc -l)
        if (($(echo "$took > $against_largest" | bc -l))); then
            against_largest=$took against_largest_name=tdbg/src/$name.hpp
        fi
    done
fi
yardstick

# row <label> <mode> <seconds> <object>: prints a line; sets `ratio`.
row() {
    ratio=$(printf '%.2f' "$(echo "$3 / $base" | bc -l)")
    printf '%-34s %-16s %9.2f %7.2fx %12s\n' "$1" "$2" "$3" "$ratio" "$(object_bytes "$4")"
}
printf '\n%-34s %-16s %9s %8s %12s\n' "translation unit" "mode" "seconds" "ratio" "object bytes"
row "xtensor/xarray.hpp only" "-" "$base" "$work/xtensor_only.o"
total=0 largest=0 largest_name=""
for i in "${!labels[@]}"; do
    if [[ ${modes[i]} == "engine, once" ]]; then
        printf '%-34s %-16s %9.2f\n' "  the parts together" "engine, CPU" "$total"
    fi
    row "${labels[i]}" "${modes[i]}" "${seconds[i]}" "${objects[i]}"
    if [[ ${modes[i]} == "engine part" ]]; then
        total=$(echo "$total + ${seconds[i]}" | bc -l)
        if (($(echo "${seconds[i]} > $largest" | bc -l))); then
            largest=${seconds[i]} largest_name=${labels[i]}
        fi
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

# guard <what> <now> <REV>: the regression guard, now <= 1.10 x REV.
guard() {
    local change
    change=$(printf '%+.1f%%' "$(echo "($2 / $3 - 1) * 100" | bc -l)")
    if (($(echo "$2 <= $3 * 1.10" | bc -l))); then
        checks+=("  held     $1 against $against_name: $change")
    else
        checks+=("  BROKEN   $1 against $against_name: $change (more than 10% above)")
        failed=true
    fi
}
if [[ -n $against ]]; then
    revision=$against_name
    [[ $against != "$against_name" ]] && revision+=" ($against)"
    printf '\nagainst %s, compiled alternately with this tree:\n' "$revision"
    printf '%-34s %-16s %9s %9s %8s %12s %12s\n' "translation unit" "mode" "seconds" "$against_name" "ratio" \
        "object bytes" "$against_name"
    for i in "${!against_seconds[@]}"; do
        change=$(printf '%.2f' "$(echo "${seconds[i]} / ${against_seconds[i]}" | bc -l)")
        printf '%-34s %-16s %9.2f %9.2f %7.2fx %12s %12s\n' "${labels[i]}" "${modes[i]}" "${seconds[i]}" \
            "${against_seconds[i]}" "$change" "$(object_bytes "${objects[i]}")" "$(object_bytes "${against_objects[i]}")"
        guard "${labels[i]}, ${modes[i]}" "${seconds[i]}" "${against_seconds[i]}"
    done
    printf '%-34s %-16s %9.2f %9.2f %7.2fx\n' "the engine's parts together" "engine, CPU" "$total" \
        "$against_parts_total" "$(echo "$total / $against_parts_total" | bc -l)"
    printf '%-34s %-16s %9.2f %9.2f %7.2fx   (%s; %s: %s)\n' "the engine's largest part" "engine, wall" "$largest" \
        "$against_largest" "$(echo "$largest / $against_largest" | bc -l)" "$largest_name" "$against_name" \
        "$against_largest_name"
fi

libtorch_case
report
