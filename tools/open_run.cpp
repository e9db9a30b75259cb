// Opening the run a subcommand was given (open_run.hpp).

#include "open_run.hpp"

#include <chrono>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "command_registry.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/format/json.hpp"

namespace tdbg::cli {

trial open_run(const std::string& location, trial_options options, const wait_function& wait, step_range range) {
    // The trial waits for the run (its directory, then its collection files) as long as
    // collection_wait says, pausing with `wait` so that a signal ends the wait.
    if (wait) {
        options.pause = [&](std::chrono::milliseconds t) {
            if (wait(t)) {
                throw wait_interrupted(fmt::format("{}: interrupted while waiting for the run to start", location));
            }
        };
    }
    try {
        // create_trial's errors say what is wrong with the place given (no such directory, not a
        // directory, not a run): passed on as they are.
        return create_trial(location, std::nullopt, range, options);
    } catch (const wait_interrupted&) {
        throw;
    } catch (const tdbg::error&) {
        // A read the signal cut short (an S3 request cancelled): the signal, not the read, is the news.
        if (wait && wait(std::chrono::milliseconds(0))) {
            throw wait_interrupted(fmt::format("{}: interrupted while reading the run", location));
        }
        throw;
    }
}

std::string single_run_argument(const std::vector<std::string>& positional) {
    if (positional.empty()) {
        throw argument_error("missing the run directory");
    }
    if (positional.size() > 1) {
        throw argument_error(fmt::format("expected one run directory, got {} arguments", positional.size()));
    }
    return positional.front();
}

std::string json_document_text(const format::json_value& doc) {
    format::json_style style;
    style.indent = 1;
    style.sort_keys = true;
    style.replace_invalid_utf8 = true;
    return format::dump_json(doc, style) + "\n";
}

} // namespace tdbg::cli
