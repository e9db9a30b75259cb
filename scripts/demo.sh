#!/usr/bin/env bash
# The tdbg demo: builds the examples and the tdbg command line (Release), trains a small
# MLP with the hook (examples/train_mlp), lists what it saved (`tdbg ls`), runs rules
# over it (`tdbg rules`) and writes an HTML report of it (`tdbg report`, DIR.html beside the run:
# the command refuses to write inside the run it reads).
# Installs missing Debian packages first (as root; otherwise prints the apt-get command).
#
# Usage: scripts/demo.sh [--out DIR] [--steps N]
#   --out DIR    where the run is written (default <repo>/demo-run; replaced if it holds a run)
#   --steps N    training steps (default 200)
# Environment: TDBG_BUILD_DIR (build trees; default <repo>/build), TDBG_JOBS (default 2),
#   TDBG_DEMO_RULES (the rules to run; default "VanishingGradient ExplodingTensor LossNotDecreasing"),
#   TDBG_DEMO_PREBUILT (a build tree that holds examples/train_mlp and tools/tdbg already: the demo
#   runs them, without installing or building anything; the test suite runs the demo so).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

out=$TDBG_REPO/demo-run
steps=200
while (($# > 0)); do
    case $1 in
    --out) out=${2:?--out needs a directory}; shift ;;
    --steps) steps=${2:?--steps needs a number}; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
if ! [[ $steps =~ ^[0-9]+$ ]]; then
    echo "error: --steps wants a whole number, got '$steps'" >&2
    exit 2
fi
out=$(realpath -m "$out")

if [[ -n ${TDBG_DEMO_PREBUILT:-} ]]; then
    build=$(realpath -m "$TDBG_DEMO_PREBUILT")
    train_mlp=$build/examples/train_mlp
    tdbg_say "use the programs built in $build"
else
    tdbg_ensure_packages "${TDBG_BUILD_PACKAGES[@]}"
    build=$TDBG_BUILD_ROOT/release
    tdbg_say "build the examples and the tdbg command line (Release, $build)"
    tdbg_configure "$build" -DCMAKE_BUILD_TYPE=Release -DTDBG_BUILD_TESTS=OFF -DTDBG_BUILD_BENCHMARKS=OFF \
        -DTDBG_BUILD_EXAMPLES=ON -DTDBG_BUILD_TOOLS=ON -DTDBG_LIBTORCH=OFF -DTDBG_CUDA=OFF
    # The programs of the demo, where this configuration builds them. Removed first, so that
    # what is there after the build is what the sources define now (a relink at most).
    train_mlp=$build/examples/train_mlp
    rm -f "$train_mlp" "$build/tools/tdbg"
    tdbg_build "$build"
fi
cli=$(find "$build/tools" -maxdepth 2 -type f -name tdbg -perm -u+x 2>/dev/null | head -n 1 || true)
if [[ ! -x $train_mlp ]]; then
    echo "error: the build produced no $train_mlp: examples/train_mlp.cpp is missing or does not define it" >&2
    exit 1
fi

# Refuse to delete anything that is not a previous run.
if [[ -e $out ]]; then
    if [[ $out == "$TDBG_REPO/demo-run" || -d $out/index || -d $out/events || -d $out/collections ]]; then
        rm -rf "$out"
    elif [[ -n $(ls -A "$out") ]]; then
        echo "error: $out is not empty and holds no tdbg run; pick another --out" >&2
        exit 1
    fi
fi

tdbg_say "train: train_mlp --out $out --steps $steps"
"$train_mlp" --out "$out" --steps "$steps"

if [[ -n $cli ]]; then
    tdbg_say "inspect: tdbg ls $out"
    "$cli" ls "$out"

    if "$cli" rules --help >/dev/null 2>&1; then
        rule_args=()
        for rule in ${TDBG_DEMO_RULES:-VanishingGradient ExplodingTensor LossNotDecreasing}; do
            rule_args+=(--rule "$rule")
        done
        tdbg_say "analyse: tdbg rules $out ${rule_args[*]}"
        # Exit status 1 means a rule's condition was met: a finding, not a failure of the demo.
        status=0
        "$cli" rules "$out" "${rule_args[@]}" || status=$?
        if ((status == 1)); then
            echo "(a rule's condition was met: see above)"
        elif ((status != 0)); then
            echo "error: tdbg rules failed with status $status" >&2
            exit "$status"
        fi
    else
        echo "note: this tdbg has no 'rules' command yet; skipped the analysis"
    fi

    # One HTML page of the run's plots with the same rules' triggers marked (exit 0 whatever
    # the rules found; `tdbg rules` above is the gate).
    tdbg_say "report: tdbg report $out -o $out.html ${rule_args[*]}"
    "$cli" report "$out" -o "$out.html" "${rule_args[@]}"

    # A rule of one's own (examples/custom_rule.hpp), compiled into a build of the command
    # line (examples/custom_cli) and run by name like the built-in ones.
    if [[ -x $build/examples/tdbg_custom ]]; then
        tdbg_say "custom rule: tdbg_custom rules $out --rule CustomGradientRule --param threshold=20.0"
        status=0
        "$build/examples/tdbg_custom" rules "$out" --rule CustomGradientRule --param threshold=20.0 || status=$?
        if ((status > 1)); then
            echo "error: the custom rule failed with status $status" >&2
            exit "$status"
        fi
    fi
else
    echo "note: the tdbg command line (tools/) is not built yet; skipped 'tdbg ls' and 'tdbg rules'"
fi

tdbg_say "done: the run is in $out"
