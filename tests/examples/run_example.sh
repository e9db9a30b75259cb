#!/usr/bin/env bash
# Runs one example program as a user runs it and checks what it did (tests/examples).
#
# Usage: run_example.sh <work dir> <exit status> <program> [argument...] [-- <pattern>...]
#   <work dir>     emptied, then the program's working directory and TMPDIR
#   <exit status>  the status the program must exit with
#   <pattern>      an extended regular expression (grep -E) that some line of the program's
#                  output (stdout and stderr) must match; '!<pattern>': no line may match
# Prints the output and every failed check, and exits 1 when a check failed.
set -euo pipefail

if (($# < 3)); then
    echo "usage: run_example.sh <work dir> <exit status> <program> [argument...] [-- <pattern>...]" >&2
    exit 2
fi
work=$1 expected=$2
shift 2
command=()
while (($# > 0)) && [[ $1 != -- ]]; do
    command+=("$1")
    shift
done
(($# > 0)) && shift # the --
patterns=("$@")

rm -rf "$work"
mkdir -p "$work"
output=$work/output.txt
status=0
(cd "$work" && TMPDIR=$work "${command[@]}") >"$output" 2>&1 </dev/null || status=$?

echo "\$ ${command[*]}"
cat "$output"
echo "(exit status $status)"

failed=false
if ((status != expected)); then
    echo "FAILED: exit status $status, expected $expected"
    failed=true
fi
for pattern in "${patterns[@]}"; do
    if [[ $pattern == '!'* ]]; then
        if grep -Eq -- "${pattern:1}" "$output"; then
            echo "FAILED: a line matches '${pattern:1}':"
            grep -En -- "${pattern:1}" "$output" | head -5
            failed=true
        fi
    elif ! grep -Eq -- "$pattern" "$output"; then
        echo "FAILED: no line matches '$pattern'"
        failed=true
    fi
done
if $failed; then
    exit 1
fi
echo "passed: exit status $expected, ${#patterns[@]} patterns"
