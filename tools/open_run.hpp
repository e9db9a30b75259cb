#pragma once
// Opening the run a subcommand was given: a local directory, or a URL of a
// storage scheme the program knows (s3:// when tdbg's S3 backend is built in),
// with messages that say what is wrong with a local path before the trial is asked.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::cli {

/// Pauses between two looks at a run that is not there yet, for at most the
/// time given; returns true to stop waiting (a signal asked the program to stop).
using wait_function = std::function<bool(std::chrono::milliseconds)>;

/// Thrown by open_run when its wait_function said to stop waiting, or when opening
/// failed after a signal came (a read it cut short: an S3 request is cancelled).
class wait_interrupted : public tdbg::error {
public:
    using tdbg::error::error;
};

/// Opens the run at `location` (a local directory or a URL); throws tdbg::error
/// with a clear message for a missing path, a file, or a place that holds no run.
/// With options.collection_wait (`--follow`), a local directory that does not
/// exist yet is waited for as long as a run's first files are, pausing with
/// `wait` (none: sleeping) between looks. An error while opening, once `wait`
/// says a signal came (asked for 0 ms), becomes wait_interrupted. Only the index of the steps
/// in `range` is read.
trial open_run(const std::string& location, trial_options options = {}, const wait_function& wait = {},
               step_range range = {});

/// Exactly one positional argument, the run's location.
std::string single_run_argument(const std::vector<std::string>& positional);

/// The JSON text of `doc` as the command line prints it: json.dumps(doc, indent=1, sort_keys=True) and a newline.
std::string json_document_text(const format::json_value& doc);

} // namespace tdbg::cli
