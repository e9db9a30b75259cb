#!/usr/bin/env bash
# Prepares the real Python smdebug 1.0.34 for the cross-checks of this folder:
# ../shared/tools/smdebug/setup.sh copies its source into DEST and compiles its
# protos (the Debian packages come from scripts/deps.sh). Prints "SKIPPED: ..."
# and exits 77 when ../shared or a Python package is missing, unless
# TDBG_REQUIRE_SMDEBUG=1 (CI) makes that a failure.
#
# usage: setup_smdebug.sh SHARED_DIR DEST
set -uo pipefail
shared=${TDBG_SHARED_DIR:-$1}
dest=$2
skip() {
    if [[ ${TDBG_REQUIRE_SMDEBUG:-} == 1 ]]; then
        echo "FAILED: $* (TDBG_REQUIRE_SMDEBUG=1)" >&2
        exit 1
    fi
    echo "SKIPPED: $*"
    exit 77
}
setup=$shared/tools/smdebug/setup.sh
[[ -f $setup ]] || skip "no $setup (the shared reference material is not beside the checkout)"
log=$(SKIP_APT=1 bash "$setup" "$dest" 2>&1) || skip "Python smdebug cannot be set up: $log"
echo "$log"
