#pragma once
// Opening the run directory a subcommand was given, with messages that say
// what is wrong with the path before the trial is asked.

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "tdbg/trial/trial.hpp"
#if defined(TDBG_HAS_S3)
#include "tdbg/storage/s3.hpp"
#endif

namespace tdbg::cli {

/// Opens the local run at `path`; throws tdbg::error with a clear message
/// for a missing path, a file, or a directory that holds no run.
/// With options.collection_wait (`--follow`), a directory that does not exist yet
/// is waited for as long as a run's first files are.
inline trial<local_storage> open_local_run(const std::string& path, trial_options options = {}) {
    std::error_code ec;
    auto status = std::filesystem::status(path, ec);
    const auto deadline = std::chrono::steady_clock::now() + options.collection_wait;
    while ((ec || !std::filesystem::exists(status)) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(options.poll_interval, std::chrono::milliseconds(500)));
        status = std::filesystem::status(path, ec);
    }
    if (ec || !std::filesystem::exists(status)) {
        throw tdbg::error(path + ": no such directory" +
                          (options.collection_wait.count() > 0 ? " (waited for it to appear)" : std::string()));
    }
    if (!std::filesystem::is_directory(status)) {
        throw tdbg::error(path + ": not a directory (give the run's directory, the one holding index/ and events/)");
    }
    try {
        return create_trial(path, std::nullopt, {}, options);
    } catch (const missing_collection_files&) {
        throw tdbg::error(path + ": not a run directory (no collections/000000000/<worker>_collections.json; "
                                 "expected the out_dir of a tdbg or smdebug hook)");
    }
}

/// Opens the local run at `path` (as open_local_run; an S3 URL is an error here: see with_run).
inline trial<local_storage> open_run(const std::string& path, trial_options options = {}) {
    if (path.rfind("s3://", 0) == 0) {
        throw tdbg::error(path + ": this command reads local runs only");
    }
    return open_local_run(path, options);
}

/// Calls `f(trial)` with the run at `path`: a local directory, or with the
/// S3 backend built in (tdbg::s3), an "s3://bucket/prefix" URL.
template <class F>
decltype(auto) with_run(const std::string& path, F&& f) {
    if (path.rfind("s3://", 0) == 0) {
#if defined(TDBG_HAS_S3)
        std::string name = path;
        while (!name.empty() && name.back() == '/') {
            name.pop_back();
        }
        name = name.substr(name.rfind('/') + 1);
        try {
            return f(open_trial(s3_storage(path), name));
        } catch (const missing_collection_files&) {
            throw tdbg::error(path + ": not a run (no collections/000000000/<worker>_collections.json under it)");
        }
#else
        throw tdbg::error(path + ": S3 runs need tdbg built with its S3 backend (libcurl and pugixml)");
#endif
    }
    return f(open_local_run(path));
}

/// Exactly one positional argument, the run directory.
inline std::string single_run_argument(const std::vector<std::string>& positional) {
    if (positional.empty()) {
        throw usage_error("missing the run directory");
    }
    if (positional.size() > 1) {
        throw usage_error("expected one run directory, got " + std::to_string(positional.size()) + " arguments");
    }
    return positional.front();
}

} // namespace tdbg::cli
