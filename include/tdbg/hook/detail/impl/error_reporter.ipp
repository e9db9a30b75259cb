#pragma once
/// \file
/// Definitions of tdbg/hook/detail/error_reporter.hpp.

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/utf8.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/hook/detail/error_reporter.hpp"

namespace tdbg::detail {

TDBG_DECL void error_reporter::report_waiting(async_writer* writer, std::int64_t step) {
    if (start_error_) {
        failed(std::exchange(start_error_, nullptr), step);
    }
    if (writer) {
        if (std::exception_ptr e = writer->take_error()) {
            failed(e, step);
        }
    }
}

TDBG_DECL void error_reporter::failed(const std::exception_ptr& e, std::int64_t step) {
    std::string what = "unknown error";
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        what = x.what();
    } catch (...) { // NOLINT(bugprone-empty-catch): described as an unknown error
    }
    if (!first_error_) {
        first_error_ = what;
    }
    if (options_.on_write_error == write_error_policy::rethrow) {
        std::rethrow_exception(e);
    }
    log(fmt::format("tdbg::hook: saving stopped at step {}: {}; training goes on, and the run at {} stays "
                    "readable up to its last published step",
                    step, what, storage_.describe()));
}

TDBG_DECL void error_reporter::side_write_failed(const storage_error& e, std::string_view what) const {
    if (options_.on_write_error == write_error_policy::rethrow) {
        throw;
    }
    log(fmt::format("tdbg::hook: {}{}", what, e.what()));
}

TDBG_DECL void error_reporter::log(const std::string& line) const {
    const std::string safe = terminal_safe(line);
    if (options_.log) {
        options_.log(safe);
    } else {
        std::fprintf(stderr, "%s\n", safe.c_str());
    }
}

TDBG_DECL void error_reporter::selection_found(const std::vector<std::string>& found) const {
    if (found.empty()) {
        return;
    }
    if (options_.selection_check == selection_check_policy::error) {
        std::string what;
        for (const std::string& f : found) {
            what += (what.empty() ? "" : "; ") + f;
        }
        throw config_error(what);
    }
    for (const std::string& f : found) {
        log(f);
    }
}

} // namespace tdbg::detail
