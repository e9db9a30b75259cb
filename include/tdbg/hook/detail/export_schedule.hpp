#pragma once
/// \file
/// When the hook queues its collections file (collections/000000000/worker_<name>_collections.json):
/// before the first index file, so that a run whose first index file is published can always be
/// opened, and again at close when the collections learned names since.

#include <cstdint>

namespace tdbg::detail {

/// The collections file's schedule. (After a write error nothing is queued: the writer has
/// stopped, and the hook asks no more.)
class export_schedule {
public:
    /// True when the file is due at the end of a step that queued records (`step_wrote`).
    [[nodiscard]] bool due_at_step_end(bool step_wrote) const noexcept { return step_wrote && !exported_; }

    /// True when the file is due at close, the selection being at `version`
    /// (collection_selection::version).
    [[nodiscard]] bool due_at_close(std::uint64_t version) const noexcept {
        return !exported_ || version != version_at_export_;
    }

    /// The file of the selection at `version` was queued.
    void queued(std::uint64_t version) noexcept {
        exported_ = true;
        version_at_export_ = version;
    }

private:
    bool exported_ = false;
    std::uint64_t version_at_export_ = 0;
};

} // namespace tdbg::detail
