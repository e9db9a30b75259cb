#!/usr/bin/env bash
# Builds tdbg's whole suite (tests, consumer projects, examples, benchmarks, tools) twice with
# -Werror and runs ctest on both: as C++17, and as C++20 under AddressSanitizer and
# UndefinedBehaviorSanitizer (-fno-sanitize-recover=all, so any report fails its test). The
# checks that every public header compiles on its own and pulls only what it uses, the packaging
# tests, the comparison of torch_hook's records with Python smdebug's (bytes, which the standard
# does not change) and the benchmarks' build are the C++17 build's, and so is the optional CUDA
# component (tdbg::cuda, where nvcc is found); the C++20 build builds and runs the tests,
# examples and tools. Prints a summary.
# Installs missing Debian packages first (as root; otherwise prints the apt-get command).
#
# Usage: scripts/test.sh [--sanitize] [-- <ctest arguments>...]
#   --sanitize   only the sanitized C++20 build
#   -- ...       passed on to ctest, e.g. `-- -R tfrecord`
# Environment: TDBG_BUILD_DIR (build trees; default <repo>/build), TDBG_JOBS (default 2),
#   TDBG_SHARED_DIR (reference fixtures; default <repo>/../shared), TDBG_TEST_AREAS
#   (developers only: build just these areas, e.g. "core;storage").
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

sanitize=false
ctest_args=()
while (($# > 0)); do
    case $1 in
    --sanitize) sanitize=true ;;
    --) shift; ctest_args=("$@"); break ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

tdbg_ensure_packages "${TDBG_TEST_PACKAGES[@]}"

# -g1 (functions and line tables, no variables): backtraces and sanitizer reports keep their
# file:line, and the builds spend about a quarter less CPU than with full -g.
common=(-DTDBG_WERROR=ON -DTDBG_BUILD_TESTS=ON -DTDBG_BUILD_EXAMPLES=ON -DTDBG_BUILD_TOOLS=ON
        -DCMAKE_CXX_EXTENSIONS=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_CXX_FLAGS_DEBUG=-g1)
# The C++20 build is the sanitized one: one build tree proves both the newer standard and the
# absence of memory errors and undefined behaviour, where a third tree would cost CI a quarter
# of its time. Its instrumentation needs the sanitizers at link time too.
sanitize_flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
declare -A variant_args=(
    [cxx17]="-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_STANDARD=17 -DTDBG_BUILD_BENCHMARKS=ON"
    [cxx20]="-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_STANDARD=20 -DTDBG_CUDA=OFF -DTDBG_TORCH_SMDEBUG_CHECK=OFF -DTDBG_BUILD_BENCHMARKS=OFF -DTDBG_HEADER_CHECK=OFF -DTDBG_INCLUDE_CHECK=OFF -DTDBG_CONSUMER_TESTS=OFF"
)
declare -A variant_flags=(
    [cxx17]=""
    [cxx20]="$sanitize_flags"
)
declare -A variant_link=(
    [cxx17]="$TDBG_LINKER_FLAGS"
    [cxx20]="-fsanitize=address,undefined $TDBG_LINKER_FLAGS"
)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_init_order=1:check_initialization_order=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if $sanitize; then
    variants=(cxx20)
else
    variants=(cxx17 cxx20)
fi

declare -A result timing
failed=false
for variant in "${variants[@]}"; do
    dir=$TDBG_BUILD_ROOT/$variant
    start=$SECONDS
    # shellcheck disable=SC2206 # the per-variant arguments have no spaces inside them
    args=(${variant_args[$variant]})

    tdbg_say "$variant: configure ($dir)"
    args+=("-DCMAKE_EXE_LINKER_FLAGS=${variant_link[$variant]}" "-DCMAKE_SHARED_LINKER_FLAGS=${variant_link[$variant]}")
    if [[ -n ${variant_flags[$variant]} ]]; then
        args+=("-DCMAKE_CXX_FLAGS=${variant_flags[$variant]}")
    fi
    if ! tdbg_configure "$dir" "${common[@]}" "${args[@]}"; then
        result[$variant]="FAILED to configure"
    else
        tdbg_say "$variant: build (-j$TDBG_JOBS)"
        built=true
        tdbg_build "$dir" || built=false
        # Even after a build error: the tests of everything that did build still say something.
        tdbg_say "$variant: ctest"
        log=$dir/ctest.log
        tested=true
        ctest --test-dir "$dir" --output-on-failure --no-tests=error --parallel "$TDBG_JOBS" --timeout 900 \
            "${ctest_args[@]}" 2>&1 | tee "$log" || tested=false
        if ! $built; then
            result[$variant]="FAILED to build"
        elif ! $tested; then
            result[$variant]="FAILED tests"
        else
            result[$variant]="passed"
        fi
        summary=$(grep -E '^[0-9]+% tests passed' "$log" | tail -1 || true)
        skipped=$(grep -c '(Skipped)' "$log" || true)
        result[$variant]+=": ${summary:-no ctest summary}, $skipped skipped"
        if ! $tested && [[ -s $dir/Testing/Temporary/LastTestsFailed.log ]]; then
            result[$variant]+=$'\n      failed: '$(cut -d: -f2- "$dir/Testing/Temporary/LastTestsFailed.log" | paste -sd ';' -)
        fi
    fi
    timing[$variant]=$(tdbg_duration $((SECONDS - start)))
    [[ ${result[$variant]} == passed* ]] || failed=true
done

tdbg_say "summary"
for variant in "${variants[@]}"; do
    printf '  %-9s %-8s %s\n' "$variant" "${timing[$variant]}" "${result[$variant]}"
done
if $failed; then
    echo "FAILED" >&2
    exit 1
fi
echo "all passed"
