#pragma once
/// \file
/// The error a trial throws for an event file its index lists but that cannot be read.

#include <string>
#include <utility>

#include "tdbg/core/error.hpp"

namespace tdbg {

/// An event file that an index file lists is missing or cannot be read (no permission, not a
/// regular file, a link out of the run, an I/O error). The run is damaged: this is an error,
/// never smdebug's "not saved" (`tensor_unavailable_for_step`), so that a rule evaluation
/// that meets it fails instead of skipping the step. `file()` is the event file's path.
class unreadable_event_file : public storage_error {
public:
    unreadable_event_file(const std::string& what, std::string file) : storage_error(what), file_(std::move(file)) {}
    /// The event file, as the storage describes it ("/runs/a/events/000000000007/...").
    [[nodiscard]] const std::string& file() const noexcept { return file_; }

private:
    std::string file_;
};

} // namespace tdbg
