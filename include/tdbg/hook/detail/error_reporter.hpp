#pragma once
/// \file
/// The hook's error reporting: the write error that stops the hook (thrown or logged as
/// hook_options::on_write_error says, and the first one kept), the storage errors of the writes
/// beside the writer's (SageMaker metrics, the state file), what the selection check finds, and
/// the hook's log (hook_options::log, else standard error).

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/hook/detail/writer/async_writer.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// See the file comment. It reads the hook's options (on_write_error, log, selection_check)
/// and names the run by its storage; both outlive it (they are the engine's).
class error_reporter {
public:
    error_reporter(const hook_options& options, const any_storage& storage) noexcept
        : options_(options), storage_(storage) {}

    /// The first write error, if one stopped the hook.
    [[nodiscard]] const std::optional<std::string>& first_error() const noexcept { return first_error_; }

    /// True while no write error was met: none reported, and no error of the start waits.
    [[nodiscard]] bool clean() const noexcept { return !first_error_ && !start_error_; }

    /// Keeps the start's storage error of a worker without a writer, until report().
    void start_failed(std::exception_ptr e) noexcept { start_error_ = std::move(e); }

    /// Reports the error that stopped the writer, once: thrown (rethrow policy) or
    /// printed (disable policy, smdebug's: training goes on without the hook). The start's
    /// error first, then `writer`'s (none when null); `step` is the step the message names.
    /// Inline while nothing waits (every save asks).
    void report(async_writer* writer, std::int64_t step) {
        if (start_error_ || (writer != nullptr && writer->error_waiting())) {
            report_waiting(writer, step);
        }
    }

    /// A write error at `step`: kept when it is the first; rethrown under
    /// write_error_policy::rethrow, else logged.
    TDBG_DECL void failed(const std::exception_ptr& e, std::int64_t step);

    /// A storage error of a write beside the writer's (SageMaker metrics, the state file),
    /// called in the handler that caught `e`: rethrown under write_error_policy::rethrow, else
    /// logged as "tdbg::hook: <what><e.what()>"; it does not stop the hook.
    TDBG_DECL void side_write_failed(const storage_error& e, std::string_view what) const;

    /// One line to the hook's log (hook_options::log, else standard error), made safe for a terminal.
    TDBG_DECL void log(const std::string& line) const;

    /// What the selection check found at a step's end: logged, or thrown (a config_error) by
    /// the error policy once the step is queued whole.
    TDBG_DECL void selection_found(const std::vector<std::string>& found) const;

private:
    // report(), once an error waits.
    TDBG_DECL void report_waiting(async_writer* writer, std::int64_t step);

    const hook_options& options_;
    const any_storage& storage_;
    std::optional<std::string> first_error_;
    std::exception_ptr start_error_; // the start's storage error, for a worker without a writer, until reported
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/error_reporter.ipp"
#endif
