#pragma once
/// \file
/// What the hook decides of its TensorBoard export: whether it exports, where the files go, and
/// the tags tensors and scalars get (smdebug's _clean_tag). The files themselves are built by the
/// writer (hook/detail/writer/tensorboard_writer.hpp).

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

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/tensorboard_export.ipp"
#endif
