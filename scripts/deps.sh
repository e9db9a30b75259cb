# shellcheck shell=bash disable=SC2034 # sets variables for the scripts that source it
# The Debian 12 packages tdbg needs, in one place. Sourced by scripts/demo.sh,
# scripts/test.sh and scripts/clang-tidy.sh; not meant to be run on its own.

# To build the library, its examples and the tdbg command line.
TDBG_BUILD_PACKAGES=(
    build-essential g++ cmake ninja-build pkg-config
    xtensor-dev libxtensor-dev xtl-dev libxsimd-dev libfmt-dev libpcre2-dev
)

# To run the whole test suite and the static analysis: Catch2, the Python side of the
# cross-checks (protobuf, numpy, and what the real Python smdebug of ../shared needs to
# read and write runs, torch for its PyTorch hook), clang-tidy, the local S3 test server with the S3 backend,
# a headless browser with an image decoder to check the pages `tdbg report` draws,
# libtorch for the libtorch integration (tdbg::libtorch), and Open MPI to run the
# data-parallel example under mpirun (tests/mpi).
TDBG_TEST_PACKAGES=(
    "${TDBG_BUILD_PACKAGES[@]}"
    catch2 nlohmann-json3-dev python3 python3-protobuf python3-numpy protobuf-compiler clang-tidy
    python3-boto3 python3-pandas python3-psutil python3-packaging python3-requests python3-six python3-torch
    python3-swift curl libcurl4-openssl-dev libpugixml-dev
    libtorch-dev
    openmpi-bin libopenmpi-dev
    chromium python3-pil python3-jsonschema
)

# tdbg_ensure_packages <package>...: checks the packages with dpkg-query; installs the
# missing ones when running as root, otherwise prints the apt-get command and returns 1.
tdbg_ensure_packages() {
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "note: dpkg-query not found (not Debian?); assuming these are installed: $*" >&2
        return 0
    fi
    local missing=() package status
    for package in "$@"; do
        status=$(dpkg-query --show --showformat='${db:Status-Abbrev}' "$package" 2>/dev/null || true)
        if [[ $status != ii* ]]; then
            missing+=("$package")
        fi
    done
    if ((${#missing[@]} == 0)); then
        return 0
    fi
    if [[ $(id -u) -ne 0 ]]; then
        echo "error: missing Debian packages: ${missing[*]}" >&2
        echo "Install them, then run this again:" >&2
        echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
        return 1
    fi
    echo "==> installing missing Debian packages: ${missing[*]}"
    # One `apt-get update` per run, even when several scripts share the shell's environment.
    if [[ -z ${TDBG_APT_UPDATED:-} ]]; then
        apt-get update -q
        export TDBG_APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
}
