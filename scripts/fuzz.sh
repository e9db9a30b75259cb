#!/usr/bin/env bash
# Builds tdbg's libFuzzer targets (tests/fuzz/fuzz_*.cpp) with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs each one for a bounded time from its seed corpus
# (tests/fuzz/corpus/<target>/), TDBG_JOBS targets side by side (each fuzzer is one process:
# every target gets its whole time). Fails on any crash, sanitizer report, leak, timeout or
# allocation over the limit. Installs missing Debian packages first (as root; otherwise prints
# the apt-get command).
#
# Usage: scripts/fuzz.sh [--seeds] [target...]
#   --seeds   rewrite the seed corpora from tdbg-encoded bytes (tests/fuzz/make_seeds.cpp), then stop
#   target    fuzz only these (fuzz_event_record, fuzz_index_file, fuzz_collections_file,
#             fuzz_pattern, fuzz_rule_config)
# Environment: TDBG_FUZZ_SECONDS (per target; default 20), TDBG_JOBS (default 2),
#   TDBG_BUILD_DIR (default <repo>/build).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

seeds=false
targets=()
while (($# > 0)); do
    case $1 in
    --seeds) seeds=true ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "error: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    *) targets+=("$1") ;;
    esac
    shift
done

# clang 14 with its runtime libraries (libFuzzer, the sanitizers): Debian 12's libclang-rt-14-dev.
tdbg_ensure_packages "${TDBG_BUILD_PACKAGES[@]}" clang libclang-rt-14-dev

seconds=${TDBG_FUZZ_SECONDS:-20}
out=$TDBG_BUILD_ROOT/fuzz
mkdir -p "$out"
cxx=$(command -v clang++ || command -v clang++-14)
common=(-std=c++17 -g -O1 -I "$TDBG_REPO/include" -Wall -Wextra -Wpedantic -Werror)
# The libraries tdbg's headers use (fmt, PCRE2), linked as any header-only user links them.
read -r -a libs <<<"$(pkg-config --libs fmt libpcre2-8 2>/dev/null || echo -lfmt -lpcre2-8)"

if $seeds; then
    tdbg_say "seed corpora -> tests/fuzz/corpus"
    "$cxx" "${common[@]}" "$TDBG_REPO/tests/fuzz/make_seeds.cpp" -o "$out/make_seeds" "${libs[@]}" -pthread
    "$out/make_seeds" "$TDBG_REPO/tests/fuzz/corpus"
    exit 0
fi

if ((${#targets[@]} == 0)); then
    # fuzz_rule_config first: it compiles the whole rule engine (a minute, the others take
    # seconds), so the other targets build and fuzz beside it.
    targets=(fuzz_rule_config)
    for source in "$TDBG_REPO"/tests/fuzz/fuzz_*.cpp; do
        [[ $source == */fuzz_rule_config.cpp ]] || targets+=("$(basename "$source" .cpp)")
    done
fi

# fuzz_target <target>: builds one target and fuzzes it; its output goes to $out/<target>.log,
# its result line to $out/<target>.result (the targets run side by side, see below).
fuzz_target() {
    local target=$1 start=$SECONDS status log=$out/$1.log
    rm -f "$out/$target.result"
    {
        echo "$target: build"
        "$cxx" "${common[@]}" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
            -fno-omit-frame-pointer "$TDBG_REPO/tests/fuzz/$target.cpp" -o "$out/$target" "${libs[@]}" -pthread
    } >"$log" 2>&1 || {
        echo "$(tdbg_duration $((SECONDS - start))) FAILED to build: see $log" >"$out/$target.result"
        return
    }
    # A scratch copy of the corpus: what the run finds stays out of the repository.
    local work=$out/$target.corpus
    rm -rf "$work" "$out/$target.artifacts"
    mkdir -p "$work" "$out/$target.artifacts"
    cp "$TDBG_REPO/tests/fuzz/corpus/$target"/* "$work"/
    echo "$target: fuzz for ${seconds}s" >>"$log"
    # -timeout: a hang; -malloc_limit_mb: an unbounded allocation; -rss_limit_mb: growth.
    status=0
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
        "$out/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$out/$target.artifacts/" "$work" \
        >>"$log" 2>&1 || status=$?
    local took
    took=$(tdbg_duration $((SECONDS - start)))
    if ((status == 0)); then
        local runs
        runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
        echo "$took passed ($runs inputs)" >"$out/$target.result"
    else
        echo "$took FAILED (exit status $status): see $log and $out/$target.artifacts/" >"$out/$target.result"
    fi
}

# TDBG_JOBS targets at a time: each fuzzer is one process on one core, so every target still
# gets its whole fuzzing time, and one target's build overlaps another's fuzzing.
tdbg_say "${#targets[@]} targets, ${seconds}s of fuzzing each, $TDBG_JOBS at a time (logs: $out/<target>.log)"
for target in "${targets[@]}"; do
    while (($(jobs -rp | wc -l) >= TDBG_JOBS)); do
        wait -n || true
    done
    echo "  $target: started"
    fuzz_target "$target" &
done
wait

failed=false
for target in "${targets[@]}"; do
    if ! grep -q ' passed ' "$out/$target.result" 2>/dev/null; then
        failed=true
        tdbg_say "$target: the end of its log"
        tail -40 "$out/$target.log"
    fi
done

tdbg_say "summary"
for target in "${targets[@]}"; do
    printf '  %-24s %s\n' "$target" "$(cat "$out/$target.result" 2>/dev/null || echo "FAILED: no result")"
done
if $failed; then
    echo "FAILED" >&2
    exit 1
fi
echo "all passed"
