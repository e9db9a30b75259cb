#pragma once
/// \file
/// The TensorBoard files of one data thread of the hook's writer (hook/detail/writer/async_writer.hpp): one
/// file per mode and step, built in memory from scalars and histograms and handed on whole
/// once its step is over, named as smdebug names them.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/detail/function_ref.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/hook/detail/writer/write_items.hpp"

namespace tdbg::detail {

/// Finished TensorBoard files of a step: (key, bytes) each.
struct tensorboard_files {
    std::int64_t step = 0;
    std::vector<std::pair<std::string, std::string>> files;
};

/// The TensorBoard files a data thread is building.
class tensorboard_writer {
public:
    /// Files of `worker` on `host` (host_name()); when not `enabled`, values are ignored.
    TDBG_DECL tensorboard_writer(bool enabled, std::string host, std::string worker);

    /// Where a file goes once finished.
    using finished_sink = function_ref<void(tensorboard_files)>;

    /// Adds a scalar (waiting for its deferred value); an earlier step's file of the same mode
    /// is finished first, into `finished`.
    TDBG_DECL void add(write_items::tb_scalar& t, finished_sink finished);
    /// Adds a histogram (waiting for its deferred counts, or bucketing its values); an earlier
    /// step's file of the same mode is finished first, into `finished`.
    TDBG_DECL void add(write_items::tb_histogram& h, finished_sink finished);

    /// Finishes the files of `step` (every open one when nullopt); `step` of the result is the
    /// last one's.
    TDBG_DECL tensorboard_files finish(std::optional<std::int64_t> step);

    /// This machine's name as a file name takes it ("localhost" when it has none).
    [[nodiscard]] TDBG_DECL static std::string host_name();

private:
    struct file {
        std::int64_t step = 0;
        std::string bytes;
    };

    // The open file of mode `m` for `step`; `finished` gets the file of an earlier step it replaces.
    TDBG_DECL file& file_for(tdbg::mode m, std::int64_t step, double wall_time, finished_sink finished);
    // TensorBoard's own naming (see the definition).
    [[nodiscard]] TDBG_DECL std::string key(tdbg::mode m, std::int64_t step) const;

    bool enabled_;
    std::string host_;
    std::string worker_;
    std::map<tdbg::mode, file> files_;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/writer/impl/tensorboard_writer.ipp"
#endif
