#pragma once
/// \file
/// Storage by location: a local directory, or a URL whose scheme a backend
/// registered. The S3 backend registers "s3" when tdbg/storage/s3.hpp is part
/// of the program, so that create_trial, the command line and rules taking a
/// run's location ("other_trials") read S3 runs as they read local ones.

#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg {

/// Opens the storage of a `scheme://...` URL.
using storage_opener = any_storage (*)(std::string_view url);

/// What a run's location names, as open_storage reads it.
struct resolved_location {
    /// The URL as given, or the local directory's path (a leading `~/` expanded from $HOME).
    std::string text;
    /// True for a `scheme://...` URL.
    bool url = false;
};

/// Interprets `location`: a `scheme://...` URL, or a local directory whose leading
/// `~/` is expanded from $HOME as a shell would. The one place where a location is
/// read: the hook's out_dir, create_trial and the command line all go through it, so
/// that they agree on where a run is.
[[nodiscard]] TDBG_DECL resolved_location resolve_location(std::string_view location);

/// The storage at `location` (resolve_location): a local directory (it need not
/// exist yet), or a `scheme://...` URL of a registered scheme. Throws config_error
/// for a URL whose scheme no backend registered.
[[nodiscard]] TDBG_DECL any_storage open_storage(std::string_view location);

/// Makes open_storage open `scheme://...` URLs with `open` (replacing an earlier opener).
TDBG_DECL void register_storage_scheme(std::string scheme, storage_opener open);

/// The registered URL schemes, sorted.
[[nodiscard]] TDBG_DECL std::vector<std::string> storage_schemes();

/// Registers a scheme when constructed: a namespace-scope
/// `inline const storage_scheme_registrar s3_scheme{"s3", &open_s3};` makes it
/// known from the start of the program.
struct storage_scheme_registrar {
    storage_scheme_registrar(std::string scheme, storage_opener open) { register_storage_scheme(std::move(scheme), open); }
};

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/storage/impl/open.ipp"
#endif
