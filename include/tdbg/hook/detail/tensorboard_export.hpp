#pragma once
/// \file
/// What the hook decides of its exports beside the event and index files: whether it exports
/// TensorBoard files, where they go, and the tags tensors and scalars get (smdebug's _clean_tag),
/// the files themselves built by the writer (hook/detail/writer/tensorboard_writer.hpp); and when
/// it queues its collections file (export_schedule).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "tdbg/config.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/storage/storage.hpp"

namespace tdbg::detail {

/// Writes one TensorBoard file: its key (relative to the TensorBoard directory) and its bytes.
using tensorboard_put_function = std::function<void(const std::string&, const std::string&)>;

/// True when the hook exports TensorBoard files: asked for, or a TensorBoard directory is set.
[[nodiscard]] inline bool exports_tensorboard(const hook_options& options) noexcept {
    return options.export_tensorboard || !options.tensorboard_dir.empty();
}

/// Where the TensorBoard files of a hook with `options` writing to `run` go: inside the run for a
/// relative (or empty: "tensorboard") directory, to the local filesystem for an absolute one.
[[nodiscard]] TDBG_DECL tensorboard_put_function tensorboard_target(const hook_options& options,
                                                                   const any_storage& run);

/// smdebug's _clean_tag for TensorBoard tags: characters other than [-/\w.] become '_', leading
/// slashes go.
[[nodiscard]] TDBG_DECL std::string clean_tensorboard_tag(std::string_view name);

/// When the hook queues its collections file (collections/000000000/worker_<name>_collections.json):
/// before the first index file, so that a run whose first index file is published can always be
/// opened, and again at close when the collections learned names since. (After a write error
/// nothing is queued: the writer has stopped, and the hook asks no more.)
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

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/tensorboard_export.ipp"
#endif
