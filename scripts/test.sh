#!/usr/bin/env bash
# Builds tdbg's whole suite (tests, consumer projects, examples, benchmarks, tools) with -Werror
# and runs ctest. By default the C++17 build: every test, the checks that every public header
# compiles on its own and pulls only what it uses, the packaging tests (add_subdirectory, the
# installed CMake package, pkg-config, the Conan recipe's and the vcpkg port's flows), the
# benchmarks' build and, where nvcc is found, the optional CUDA component. --sanitize builds
# and runs the C++20 build under AddressSanitizer and UndefinedBehaviorSanitizer instead
# (-fno-sanitize-recover=all, so any report fails its test): the tests and tools.
# --all runs both, as CI does. Prints the time of each phase (configure, build, ctest) and
# every skipped test with its reason.
# Installs missing Debian packages first (as root; otherwise prints the apt-get command).
#
# A fresh clone runs every test but those that need the project's shared reference material
# (../shared beside the clone, or TDBG_SHARED_DIR): the cross-checks with the real Python
# smdebug, and the SARIF schema check. They are reported skipped, with the reason.
#
# Usage: scripts/test.sh [--sanitize | --all] [--strict-skips] [-- <ctest arguments>...]
#   --sanitize      only the sanitized C++20 build
#   --all           the C++17 build, then the sanitized C++20 build
#   --strict-skips  a skip that tests/allowed_skips.txt does not allow fails the run (CI)
#   -- ...          passed on to ctest, e.g. `-- -R tfrecord`
# Environment: TDBG_BUILD_DIR (build trees; default <repo>/build), TDBG_JOBS (default 2),
#   TDBG_SHARED_DIR (shared reference material; default <repo>/../shared), TDBG_TEST_AREAS
#   (developers only: build just these areas, e.g. "core;storage").
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

variants=(cxx17)
strict_skips=false
ctest_args=()
while (($# > 0)); do
    case $1 in
    --sanitize) variants=(cxx20) ;;
    --all) variants=(cxx17 cxx20) ;;
    --strict-skips) strict_skips=true ;;
    --) shift; ctest_args=("$@"); break ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

tdbg_ensure_packages "${TDBG_TEST_PACKAGES[@]}"

common=(-DTDBG_WERROR=ON -DTDBG_BUILD_TESTS=ON -DTDBG_BUILD_EXAMPLES=ON -DTDBG_BUILD_TOOLS=ON
        -DCMAKE_CXX_EXTENSIONS=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
# The C++20 build is the sanitized one: one build tree proves both the newer standard and the
# absence of memory errors and undefined behaviour, where a third tree would cost CI a quarter
# of its time. Its instrumentation needs the sanitizers at link time too. It compiles with -g1
# (functions and line tables, no variables), so that sanitizer reports keep their file:line; the
# C++17 build with -g0 (Catch2 names each failed check's file:line; a crash is the sanitized
# build's to place). It leaves to the C++17 build what neither the standard nor a sanitizer
# changes or what that build already runs: the Python cross-checks of bytes, the examples (their
# code paths are the tests'), the header-only libtorch test, the header and packaging checks.
sanitize_flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
declare -A variant_args=(
    [cxx17]="-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g0 -DCMAKE_CXX_STANDARD=17 -DTDBG_BUILD_BENCHMARKS=ON"
    [cxx20]="-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_CXX_STANDARD=20 -DTDBG_CUDA=OFF -DTDBG_TORCH_SMDEBUG_CHECK=OFF -DTDBG_SMDEBUG_CROSS_CHECKS=OFF -DTDBG_LIBTORCH_HEADER_ONLY_TEST=OFF -DTDBG_BUILD_EXAMPLES=OFF -DTDBG_BUILD_BENCHMARKS=OFF -DTDBG_HEADER_CHECK=OFF -DTDBG_INCLUDE_CHECK=OFF -DTDBG_CONSUMER_TESTS=OFF"
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

declare -A result timing skips
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
    phase_start=$SECONDS
    if ! tdbg_configure "$dir" "${common[@]}" "${args[@]}"; then
        result[$variant]="FAILED to configure"
        timing[$variant]="configure $(tdbg_duration $((SECONDS - phase_start)))"
    else
        timing[$variant]="configure $(tdbg_duration $((SECONDS - phase_start)))"
        tdbg_say "$variant: build (-j$TDBG_JOBS)"
        phase_start=$SECONDS
        built=true
        tdbg_build "$dir" || built=false
        timing[$variant]+=", build $(tdbg_duration $((SECONDS - phase_start)))"
        # Even after a build error: the tests of everything that did build still say something.
        tdbg_say "$variant: ctest"
        phase_start=$SECONDS
        log=$dir/ctest.log
        junit=$dir/ctest-junit.xml
        rm -f "$junit"
        tested=true
        ctest --test-dir "$dir" --output-on-failure --no-tests=error --parallel "$TDBG_JOBS" --timeout 900 \
            --output-junit "$junit" "${ctest_args[@]}" 2>&1 | tee "$log" || tested=false
        timing[$variant]+=", ctest $(tdbg_duration $((SECONDS - phase_start)))"
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
        # Every skip with its reason; under --strict-skips, one the list does not allow fails.
        skip_args=("$junit" --label "$variant")
        if $strict_skips; then
            skip_args+=(--allowed "$TDBG_REPO/tests/allowed_skips.txt")
        fi
        if [[ -f $junit ]]; then
            skip_status=0
            skips[$variant]=$(python3 "$TDBG_REPO/scripts/ctest_skips.py" "${skip_args[@]}") || skip_status=$?
            if ((skip_status != 0)); then
                result[$variant]="FAILED (skips that must not happen here): ${result[$variant]#*: }"
            fi
        else
            skips[$variant]="  $variant: no ctest JUnit file ($junit): the skips cannot be listed"
            $strict_skips && result[$variant]="FAILED (no JUnit file to check the skips): ${result[$variant]#*: }"
        fi
    fi
    timing[$variant]+=" = $(tdbg_duration $((SECONDS - start)))"
    [[ ${result[$variant]} == passed* ]] || failed=true
done

tdbg_say "summary"
for variant in "${variants[@]}"; do
    printf '  %-6s %s\n         %s\n' "$variant" "${timing[$variant]}" "${result[$variant]}"
done
needs_shared=false
for variant in "${variants[@]}"; do
    if [[ -n ${skips[$variant]:-} ]]; then
        echo "${skips[$variant]}"
        if [[ ${skips[$variant]} == *"shared reference material"* ]]; then
            needs_shared=true
        fi
    fi
done
if $needs_shared; then
    echo "  To run the skips that need the shared reference material (the real Python smdebug, the SARIF"
    echo "  schema): put the project's shared/ beside the clone (../shared), or set TDBG_SHARED_DIR to it."
fi
if $failed; then
    echo "FAILED" >&2
    exit 1
fi
echo "all passed"
