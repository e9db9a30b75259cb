#!/usr/bin/env bash
# Builds the writer/reader concurrency tests with ThreadSanitizer and runs them: the hook's
# writer threads (tests/hook/test_writer.cpp), the hook called from several threads
# (tests/hook/test_hook_threads.cpp), the trial's live-run tests
# (tests/trial/test_trial_realtime.cpp), memory_storage and the rules' watcher (tests/storage/
# test_memory_storage.cpp, tests/watch/test_watch.cpp; all in test_concurrency), and the reliability tests
# that run threads or processes side by side (crash, live reader, full disk, publication order).
# Fails on any data race or other report. Installs missing Debian packages first (as root;
# otherwise prints the apt-get command).
#
# Usage: scripts/tsan.sh
# Environment: TDBG_BUILD_DIR (default <repo>/build), TDBG_JOBS (default 2),
#   TDBG_SHARED_DIR (shared reference material; default <repo>/../shared).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case ${1:-} in
-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
"") ;;
*) echo "error: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

# GCC's ThreadSanitizer runtime is libtsan2 (pulled in by g++ 12).
tdbg_ensure_packages "${TDBG_BUILD_PACKAGES[@]}" catch2 libtsan2

dir=$TDBG_BUILD_ROOT/tsan
start=$SECONDS
tdbg_say "tsan: configure ($dir)"
TDBG_TEST_AREAS=reliability tdbg_configure "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_STANDARD=17 \
    -DTDBG_BUILD_TESTS=ON -DTDBG_BUILD_EXAMPLES=OFF -DTDBG_BUILD_BENCHMARKS=OFF -DTDBG_BUILD_TOOLS=OFF \
    -DTDBG_HEADER_CHECK=OFF -DTDBG_INCLUDE_CHECK=OFF -DTDBG_CONSUMER_TESTS=OFF -DTDBG_CUDA=OFF -DTDBG_RELIABILITY_CONCURRENCY=ON \
    "-DCMAKE_CXX_FLAGS=-fsanitize=thread -fno-omit-frame-pointer" "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread $TDBG_LINKER_FLAGS" \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
tdbg_say "tsan: build (-j$TDBG_JOBS)"
tdbg_build "$dir" --target test_concurrency test_reliability tdbg_reliability_trainer

# halt_on_error: the first report fails the test that made it; second_deadlock_stack for lock-order reports.
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:exitcode=66}
# The crash test's 50 kills (its default is 60) keep the instrumented run short.
export TDBG_CRASH_KILLS=${TDBG_CRASH_KILLS:-50}
tests=$dir/tests/reliability
status=0
# run_tests <program> <arguments>...: a test program's exit status 77 means its test cases passed
# and some skipped (tests/test_main.cpp): each skip is printed ("SKIPPED: ...") and allowed here
# only where tests/allowed_skips.txt's tsan lines allow it.
run_tests() {
    local rc=0 log
    log=$(mktemp)
    "$@" 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
    if ((rc == 77)); then
        rc=0
        while IFS= read -r reason; do
            if ! python3 - "$TDBG_REPO/tests/allowed_skips.txt" "$reason" <<'PY'; then
import re, sys
allowed = [line.split(" | ") for line in open(sys.argv[1], encoding="utf-8") if line.startswith("tsan | ")]
sys.exit(0 if any(re.search(a[1], sys.argv[2]) for a in allowed) else 1)
PY
                echo "tsan: a skip that tests/allowed_skips.txt does not allow: $reason" >&2
                rc=1
            fi
        done < <(grep -o 'SKIPPED: .*' "$log" | sed 's/^SKIPPED: //')
    fi
    rm -f "$log"
    return "$rc"
}
tdbg_say "tsan: test_concurrency (hook writer, hook threads, trial live runs, memory_storage, watcher)"
run_tests "$tests/test_concurrency" --durations yes || status=1
tdbg_say "tsan: test_reliability (crash, live reader, full disk, publication order)"
run_tests "$tests/test_reliability" --durations yes "crash*,live reader*,full disk*,publication order*" || status=1

tdbg_say "summary"
if ((status == 0)); then
    echo "  tsan $(tdbg_duration $((SECONDS - start))) passed"
    echo "all passed"
else
    echo "  tsan $(tdbg_duration $((SECONDS - start))) FAILED" >&2
    exit 1
fi
