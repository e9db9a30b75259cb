// With tdbg's S3 backend built in (CMake target tdbg::s3), this file makes every
// subcommand read s3://bucket/prefix runs: including the backend registers the
// "s3" scheme with open_storage, which create_trial and open_run go through.
// The program then registers its own opener in its place: the same storage, whose
// requests a SIGINT or SIGTERM cancels (tdbg::s3_options::cancelled), so that a
// read from a server that stalls or drips ends as soon as `tdbg rules` is signalled.

#include <string_view>
#include <utility>

#include "interruption.hpp"
#include "tdbg/storage/s3.hpp"

namespace {

tdbg::any_storage open_interruptible_s3(std::string_view url) {
    tdbg::s3_options options;
    options.cancelled = [] { return tdbg::cli::interrupted(); };
    return tdbg::s3_storage(url, std::move(options));
}

// Initialised after the header's registration (an inline variable defined earlier in this
// file), so it replaces that opener.
const tdbg::storage_scheme_registrar interruptible_s3_scheme{"s3", &open_interruptible_s3};

} // namespace
