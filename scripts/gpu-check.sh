#!/usr/bin/env bash
# tdbg's GPU checks in one call, for a machine lent with an NVIDIA GPU (H100 or H200) that has
# g++, nvcc and a python3 holding torch with CUDA (whose wheel carries libtorch), but no network,
# no apt and no CMake package for torch with CUDA: so plain g++ and nvcc, with the headers the
# bundle of ../shared/tools/gpu/make_bundle.sh brings along (Debian's xtensor, xtl, fmt, PCRE2,
# nlohmann, Catch2; Python smdebug). It
#   1. builds the engine (each part of include/tdbg/src/ in its own translation unit, with
#      TDBG_SEPARATE_COMPILATION) and the CUDA component (every src/cuda/*.cu with nvcc, the
#      .cpp files beside them with g++; skipped, and said so, where there is no .cu),
#      all in parallel;
#   2. builds one program per tests/cuda/test_*.cpp (when present; those that reach the device
#      only with the component) and tests/libtorch/test_*.cpp, as their CMakeLists.txt do, and
#      bench_libtorch, with TDBG_HAS_CUDA=1 and TDBG_TORCH_HAS_CUDA=1 when the component was
#      built (torch_hook then reduces CUDA tensors with its kernel);
#   3. runs nvidia-smi -L, every test program with TDBG_REQUIRE_CUDA=1 and TDBG_REQUIRE_TORCH=1,
#      and bench_libtorch --device cuda with the model 8 x Linear(4096, 4096), batch 256, once per
#      reducer (automatic, torch_ops), then once more beside Python smdebug (--python).
# Every step is bounded by `timeout` and by what is left of the call's budget (a step that
# cannot finish in time is skipped, so the results always come back), and prints its progress.
# Everything goes into "${OUT:-/tmp/gpu-check}", in at most 8 files: gpu-check.log (all that
# was printed), summary.txt (each step, its status and time; the benchmark tables),
# machine.txt, bench_<run>.json per benchmark run, logs.tar.gz (each step's full log).
#
# Usage: scripts/gpu-check.sh [--cpu [--nvcc]] [--bundle DIR] [--jobs N]
#   --cpu         the same on this machine's CPU with Debian's libtorch (headers in /usr/include,
#                 libraries in /usr/lib/x86_64-linux-gnu): no nvcc, no CUDA tests, bench_libtorch
#                 --device cpu (reducer automatic; torch_ops with --force-device-path; automatic
#                 with --python) on a smaller model (BENCH_ARGS): proves the script before GPU
#                 time is spent
#   --nvcc        with --cpu: also builds the CUDA component and the tests of tests/cuda with
#                 nvcc (they skip without a device); the libtorch programs stay without it, as
#                 Debian's libtorch has no CUDA
#   --bundle DIR  the bundle (default .gpu-bundle; with --cpu it is used only when named)
#   --jobs N      compilations at a time (default: the cores)
# Environment:
#   OUT                 results (default /tmp/gpu-check)
#   TDBG_GPU_BUILD      objects and programs (default build/gpu-check, or with --cpu
#                       ${TMPDIR:-/tmp}/tdbg-gpu-check-build); an object newer than every file
#                       it could depend on is reused
#   GPU_CHECK_BUDGET    seconds the whole script may take (default 540: a call's limit is 600)
#   BENCH_ARGS          arguments added to every bench_libtorch run (default on a GPU:
#                       "--steps 20 --blocks 5 --warmup 3"; with --cpu: "--width 512 --blocks 3")
#   NVCC_ARCH           nvcc's -arch (default sm_90: H100 and H200)
#   SMDEBUG_SRC         Python smdebug for --python (default: the bundle's python/, if any)
set -uo pipefail

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

arguments="$*"
cpu=false
with_nvcc=false
bundle=""
parallel=$(nproc 2>/dev/null || echo 4)
while (($# > 0)); do
    case $1 in
    --cpu) cpu=true ;;
    --nvcc) with_nvcc=true ;;
    --bundle) bundle=${2:?--bundle needs a directory}; shift ;;
    --jobs) parallel=${2:?--jobs needs a number}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "gpu-check.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 2
out=${OUT:-/tmp/gpu-check}
if $cpu; then
    build=${TDBG_GPU_BUILD:-${TMPDIR:-/tmp}/tdbg-gpu-check-build}
else
    build=${TDBG_GPU_BUILD:-build/gpu-check}
    bundle=${bundle:-.gpu-bundle}
fi
budget=${GPU_CHECK_BUDGET:-540}
mkdir -p "$out" "$build/obj" "$build/bin" "$build/tmp"
build=$(cd "$build" && pwd)
logs=$build/logs
rm -rf "$logs"
mkdir -p "$logs"
exec > >(tee "$out/gpu-check.log") 2>&1
tee_pid=$!

summary=()
bench_runs=()
failures=0

say() { printf '[gpu-check %s +%3ds] %s\n' "$(date +%H:%M:%S)" "$SECONDS" "$*"; }

# Seconds left of the budget, less a margin for packing the results (at least 1).
left() {
    local n=$((budget - 15 - SECONDS))
    echo $((n > 0 ? n : 1))
}

# The log file of step NAME.
log_of() { echo "$logs/${1//[^A-Za-z0-9_.-]/_}.log"; }

record() { # record NAME STATUS SECONDS
    summary+=("$(printf '%-52s %-32s %5ss' "$1" "$2" "$3")")
    case $2 in ok | skipped*) ;; *) failures=$((failures + 1)) ;; esac
}

finish() {
    {
        echo "gpu-check.sh $arguments on $(hostname 2>/dev/null), $(date -u +%Y-%m-%dT%H:%M:%SZ), ${SECONDS}s"
        echo
        printf '%s\n' "${summary[@]}"
        for run in "${bench_runs[@]}"; do
            [[ -f $logs/bench_$run.table ]] || continue
            printf '\n== bench_libtorch %s\n' "$run"
            cat "$logs/bench_$run.table"
        done
    } >"$out/summary.txt"
    tar -C "$build" -czf "$out/logs.tar.gz" logs 2>/dev/null
    say "done: $failures step(s) not ok; results in $out"
    cat "$out/summary.txt"
    exec >&- 2>&-
    wait "$tee_pid" 2>/dev/null
}
trap finish EXIT

# step NAME LIMIT COMMAND...: runs COMMAND with its output in $logs/NAME.log, under `timeout`
# (LIMIT seconds, or what is left of the budget), and records how it went.
step() {
    local name=$1 limit=$2 rc=0 start=$SECONDS status=ok remaining
    shift 2
    remaining=$((budget - 15 - SECONDS))
    if ((remaining < 20)); then
        say "$name: skipped, ${remaining}s left of the budget"
        record "$name" "skipped (no time left)" 0
        return 1
    fi
    ((limit > remaining)) && limit=$remaining
    say "$name: started (at most ${limit}s)"
    timeout --kill-after=10 "$limit" "$@" >"$(log_of "$name")" 2>&1 || rc=$?
    case $rc in
    0) ;;
    77)
        # A test program whose test cases passed but some skipped (tests/test_main.cpp): passed,
        # with its reasons in the table.
        status="passed, skipped: $(grep -o 'SKIPPED: .*' "$(log_of "$name")" | sed 's/^SKIPPED: //' | sort -u | paste -sd ';' -)"
        rc=0
        ;;
    124 | 137) status="TIMED OUT after ${limit}s" ;;
    *) status="FAILED (exit $rc)" ;;
    esac
    say "$name: $status in $((SECONDS - start))s"
    record "$name" "$status" $((SECONDS - start))
    return $rc
}

# ---- the toolchain ---------------------------------------------------------------------------

cxx=${CXX:-g++}
flags=(-O3 -DNDEBUG -pthread -std=c++17 -DFMT_HEADER_ONLY -include cstdint -Wall -Wextra)
includes=(-Iinclude)
libs=()
if [[ -n $bundle ]]; then
    if [[ ! -d $bundle/deps/usr/include ]]; then
        say "no bundle at $bundle (make it with ../shared/tools/gpu/make_bundle.sh $bundle, and carry it)"
        exit 1
    fi
    bundle=$(cd "$bundle" && pwd)
    includes+=(-isystem "$bundle/deps/usr/include")
fi
if $cpu; then
    abi=1
    includes+=(-isystem /usr/include/torch/csrc/api/include)
    torch_libs=(-ltorch -ltorch_cpu -lc10)
    python=${TDBG_PYTHON:-/usr/bin/python3}
else
    python=${TDBG_PYTHON:-$(command -v python3)}
    torch_dir=$("$python" -c 'import torch, os; print(os.path.dirname(torch.__file__))') || {
        say "python3 cannot import torch"
        exit 1
    }
    abi=$("$python" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
    includes+=(-isystem "$torch_dir/include" -isystem "$torch_dir/include/torch/csrc/api/include")
    torch_libs=(-L"$torch_dir/lib" "-Wl,-rpath,$torch_dir/lib" "-Wl,--no-as-needed" -ltorch -ltorch_cpu -ltorch_cuda
        -lc10 -lc10_cuda "-Wl,--as-needed")
fi
flags+=(-D_GLIBCXX_USE_CXX11_ABI="$abi")
# PCRE2: the system's library, else the bundle's runtime by path.
if echo 'int main() {}' | "$cxx" -x c++ - -o "$build/tmp/pcre2_check" -lpcre2-8 >/dev/null 2>&1; then
    libs+=(-lpcre2-8)
elif [[ -n $bundle ]] && compgen -G "$bundle/deps/usr/lib/x86_64-linux-gnu/libpcre2-8.so.0*" >/dev/null; then
    libs+=("$(ls "$bundle"/deps/usr/lib/x86_64-linux-gnu/libpcre2-8.so.0 2>/dev/null || ls "$bundle"/deps/usr/lib/x86_64-linux-gnu/libpcre2-8.so.0*)")
else
    libs+=(-lpcre2-8) # the link says what is missing
fi

nvcc=""
cuda_home=""
if ! $cpu || $with_nvcc; then
    nvcc=$(command -v nvcc || true)
    [[ -z $nvcc && -x /usr/local/cuda/bin/nvcc ]] && nvcc=/usr/local/cuda/bin/nvcc
    [[ -n $nvcc ]] && cuda_home=$(dirname "$(dirname "$nvcc")")
fi
shared=${TDBG_SHARED_DIR:-$(dirname "$repo")/shared}
if [[ -z ${SMDEBUG_SRC:-} && -n $bundle && -d $bundle/python/smdebug ]]; then
    export SMDEBUG_SRC=$bundle/python
    export TDBG_SMDEBUG_FALLBACK=$bundle/python/fallback
fi
export TDBG_PYTHON=$python

{
    echo "mode: $($cpu && echo "cpu (Debian's libtorch)" || echo gpu)"
    uname -a
    "$cxx" --version | head -1
    [[ -n $nvcc ]] && "$nvcc" --version | tail -2
    "$python" -c 'import torch; print("python torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' 2>&1
    nproc
    free -g | head -2
    df -h "$build" | tail -1
    git log -1 --format='commit %H %s' 2>/dev/null
    git status --short 2>/dev/null | head -40
} >"$out/machine.txt" 2>&1
say "machine: $(head -1 "$out/machine.txt"); $parallel compilations at a time; build in $build; results in $out"

# ---- compiling -------------------------------------------------------------------------------

# An object is reused when it was compiled with the same command and is newer than every file
# it could depend on.
fresh() {
    local object=$1
    shift
    [[ -f $object && -f $object.cmd && "$*" == "$(cat "$object.cmd")" ]] || return 1
    [[ -z $(find include tests benchmarks -newer "$object" -type f -print -quit 2>/dev/null) ]]
}

pids=()
names=()
# background NAME OUTPUT COMMAND...: runs COMMAND -o OUTPUT in the background, at most $parallel at
# a time, its output in $logs/build_NAME.log.
background() {
    local name=$1 output=$2
    shift 2
    while (($(jobs -rp | wc -l) >= parallel)); do
        wait -n 2>/dev/null || true
    done
    rm -f "$output"
    printf '%s' "$*" >"$output.cmd"
    timeout --kill-after=10 "$(left)" "$@" -o "$output" >"$logs/build_$name.log" 2>&1 &
    pids+=($!)
    names+=("$name")
}
# compile NAME OBJECT COMMAND...: the same, unless OBJECT is fresh.
compile() {
    fresh "$2" "${@:3}" || background "$@"
}

# wait_all STEP START: waits for what runs in the background, records STEP; fails if one failed.
wait_all() {
    local step_name=$1 start=$2 failed=() i
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || failed+=("${names[$i]}")
    done
    pids=()
    names=()
    if ((${#failed[@]} > 0)); then
        for i in "${failed[@]}"; do
            say "$i FAILED:"
            head -30 "$logs/build_$i.log"
        done
        record "$step_name" "FAILED (${failed[*]})" $((SECONDS - start))
        return 1
    fi
    say "$step_name: ok in $((SECONDS - start))s"
    record "$step_name" ok $((SECONDS - start))
}

# 1. The engine's parts and the CUDA component (every .cu of src/cuda with nvcc, every .cpp
#    there with the C++ compiler), side by side.
start=$SECONDS
engine_objects=()
for part in include/tdbg/src/*.hpp; do
    name=$(basename "$part" .hpp)
    source=$build/obj/engine_$name.cpp
    printf '#include <tdbg/src/%s.hpp>\n' "$name" >"$source.new"
    cmp -s "$source.new" "$source" || mv "$source.new" "$source"
    rm -f "$source.new"
    engine_objects+=("$build/obj/engine_$name.o")
    compile "engine_$name" "$build/obj/engine_$name.o" "$cxx" "${flags[@]}" -DTDBG_SEPARATE_COMPILATION \
        "${includes[@]}" -c "$source"
done
mapfile -t cuda_sources < <(find src/cuda \( -name '*.cu' -o -name '*.cpp' \) 2>/dev/null | sort)
cuda_objects=()
cuda_why=""
if ! compgen -G "src/cuda/*" >/dev/null || ! printf '%s\n' "${cuda_sources[@]}" | grep -q '\.cu$'; then
    cuda_why="no src/cuda/*.cu in this tree"
elif $cpu && ! $with_nvcc; then
    cuda_why="--cpu"
elif [[ -z $nvcc ]]; then
    cuda_why="no nvcc found"
fi
# --fmad=false: no a*b+c contracted beyond what the kernel's arithmetic asks for (as CMake builds it).
nvcc_flags=(-O3 -arch="${NVCC_ARCH:-sm_90}" -std=c++17 --fmad=false -DFMT_HEADER_ONLY -Xcompiler -pthread
    -D_GLIBCXX_USE_CXX11_ABI="$abi" "${includes[@]}")
if [[ -n $cuda_why ]]; then
    say "build: the engine's parts; the CUDA component is not built ($cuda_why)"
    record "build CUDA component" "skipped ($cuda_why)" 0
else
    say "build: the engine's parts and the CUDA component (${#cuda_sources[@]} files)"
    includes+=(-isystem "$cuda_home/include")
    for source in "${cuda_sources[@]}"; do
        name=cuda_$(echo "${source#src/cuda/}" | tr '/.' '__')
        cuda_objects+=("$build/obj/$name.o")
        if [[ $source == *.cu ]]; then
            compile "$name" "$build/obj/$name.o" "$nvcc" "${nvcc_flags[@]}" -c "$source"
        else
            compile "$name" "$build/obj/$name.o" "$cxx" "${flags[@]}" "${includes[@]}" -c "$source"
        fi
    done
fi
engine_step="build engine"
((${#cuda_objects[@]} > 0)) && engine_step+=" + CUDA component"
wait_all "$engine_step" "$start" || {
    say "the engine did not build: nothing more to do"
    exit 1
}
defines=(-DTDBG_SEPARATE_COMPILATION -DTDBG_HAS_LIBTORCH=1)
cuda_link=()
if ((${#cuda_objects[@]} > 0)); then
    # torch_hook's fused reductions need the component and libtorch with CUDA (as CMake's
    # cmake/cuda.cmake sets them); not with --cpu --nvcc: Debian's libtorch has no CUDA.
    $cpu || defines+=(-DTDBG_HAS_CUDA=1 -DTDBG_TORCH_HAS_CUDA=1)
    # The component links CUDA's runtime statically, as CMake's tdbg::cuda does.
    cuda_link=(-L"$cuda_home/lib64" -lcudart_static -ldl -lrt)
fi

# 2. The test programs (one per tests/<area>/test_*.cpp, as tests/<area>/CMakeLists.txt makes
#    them) and the benchmark.
start=$SECONDS
say "build: tests and bench_libtorch"
test_defines=(-DTDBG_SHARED_DIR="\"$shared\"" -DTDBG_TEST_TMP="\"$build/tmp\"")
compile test_main "$build/obj/test_main.o" "$cxx" "${flags[@]}" "${includes[@]}" -c tests/test_main.cpp
programs=()
smdebug_test_src=${SMDEBUG_SRC:-$build/sagemaker-debugger}
for source in tests/cuda/test_*.cpp tests/libtorch/test_*.cpp; do
    [[ -f $source && $source != *unavailable* ]] || continue
    program=$(basename "$source" .cpp)
    extra=()
    if [[ $source == tests/cuda/* ]]; then
        # A test that reaches the device needs the component (the others check its arithmetic on the host).
        if ((${#cuda_objects[@]} == 0)) && grep -q '#include <cuda' "$source"; then
            say "$program: not built (needs the CUDA component)"
            record "build $program" "skipped (no CUDA component)" 0
            continue
        fi
        extra=(-ffp-contract=off) # the host replays the kernel's arithmetic bit for bit
        ((${#cuda_objects[@]} > 0)) && extra+=(-DTDBG_HAS_CUDA=1)
    fi
    if [[ $program == test_libtorch_smdebug ]]; then
        extra=(-DTDBG_PYTHON3="\"$python\"" -DTDBG_SMDEBUG_SRC="\"$smdebug_test_src\""
            -DTDBG_SMDEBUG_RUN_SCRIPT="\"$repo/tests/libtorch/smdebug_pytorch_run.py\"")
    fi
    programs+=("$program")
    compile "$program" "$build/obj/$program.o" "$cxx" "${flags[@]}" "${defines[@]}" "${test_defines[@]}" \
        "${extra[@]}" "${includes[@]}" -Itests -c "$source"
done
compile bench_libtorch "$build/obj/bench_libtorch.o" "$cxx" "${flags[@]}" "${defines[@]}" \
    -DTDBG_BENCH_SOURCE_DIR="\"$repo\"" "${includes[@]}" -Ibenchmarks -c benchmarks/bench_libtorch.cpp
wait_all "build tests + bench_libtorch" "$start"

start=$SECONDS
say "link: ${programs[*]} bench_libtorch"
for program in "${programs[@]}" bench_libtorch; do
    objects=("$build/obj/$program.o")
    [[ $program == test_* ]] && objects+=("$build/obj/test_main.o")
    if [[ -f ${objects[0]} ]]; then
        background "link_$program" "$build/bin/$program" "$cxx" -pthread "${objects[@]}" "${engine_objects[@]}" \
            "${cuda_objects[@]}" "${torch_libs[@]}" "${cuda_link[@]}" "${libs[@]}"
    fi
done
wait_all "link" "$start"

# ---- running ---------------------------------------------------------------------------------

if ! $cpu; then
    step "nvidia-smi -L" 30 nvidia-smi -L
    cat "$(log_of "nvidia-smi -L")"
fi
# Python smdebug for test_libtorch_smdebug: the bundle's (its stand-ins for boto3 and pyinstrument
# on PYTHONPATH: the GPU machine has neither package), else set up from the shared reference.
if [[ -n ${TDBG_SMDEBUG_FALLBACK:-} ]]; then
    export PYTHONPATH=$TDBG_SMDEBUG_FALLBACK${PYTHONPATH:+:$PYTHONPATH}
elif [[ -z ${SMDEBUG_SRC:-} && -x $build/bin/test_libtorch_smdebug && -f tests/smdebug/setup_smdebug.sh ]]; then
    step "set up Python smdebug" 120 bash tests/smdebug/setup_smdebug.sh "$shared" "$smdebug_test_src"
fi
require=(TDBG_REQUIRE_TORCH=1)
$cpu || require+=(TDBG_REQUIRE_CUDA=1)
for program in "${programs[@]}"; do
    [[ -x $build/bin/$program ]] || continue
    step "$program (${require[*]})" 120 env "${require[@]}" "$build/bin/$program"
    tail -3 "$(log_of "$program (${require[*]})")"
done

# bench RUN ARGS...: one bench_libtorch run; its tables into $logs/bench_RUN.table, its JSON into $out.
bench() {
    local run=$1
    shift
    [[ -x $build/bin/bench_libtorch ]] || return 1
    bench_runs+=("$run")
    # shellcheck disable=SC2086 # BENCH_ARGS is a list of words
    step "bench_libtorch $run" 420 "$build/bin/bench_libtorch" "$@" ${bench_args} \
        --dir "$build/tmp/bench_$run" --json "$out/bench_$run.json"
    grep -v '^bench_libtorch: .*, block ' "$(log_of "bench_libtorch $run")" >"$logs/bench_$run.table"
    cat "$logs/bench_$run.table"
}
if $cpu; then
    bench_args=${BENCH_ARGS:---width 512 --blocks 3}
    bench cpu_automatic --device cpu --reducer automatic
    bench cpu_torch_ops_forced --device cpu --reducer torch_ops --force-device-path
    bench cpu_python --device cpu --reducer automatic --python
else
    bench_args=${BENCH_ARGS:---steps 20 --blocks 5 --warmup 3}
    model=(--device cuda --layers 8 --width 4096 --batch 256)
    bench cuda_automatic "${model[@]}" --reducer automatic
    bench cuda_torch_ops "${model[@]}" --reducer torch_ops
    bench cuda_python "${model[@]}" --reducer automatic --python
fi
((failures == 0))
