#pragma once
/// \file
/// The scalars of the hook's current step (smdebug's ScalarCache): those save_scalar queues, written
/// to the step's files at its end, and the SageMaker metrics (smdebug's metrics_writer): a
/// save_scalar with sm_metric, and the mean of a tensor saved in "losses", "metrics" or
/// "sm_metrics".

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/hook/deferred.hpp"
#include "tdbg/hook/detail/deferred_cell.hpp"
#include "tdbg/hook/detail/metrics_writer.hpp"
#include "tdbg/hook/detail/save_planning.hpp"
#include "tdbg/hook/detail/collection_selection.hpp"
#include "tdbg/hook/options.hpp"
#include "tdbg/reduce/compute.hpp"

namespace tdbg::detail {

/// The wall time of a record or scalar: seconds since the epoch.
[[nodiscard]] TDBG_DECL double now_seconds();

/// A scalar for the end of the step: a save_scalar (written to the step's files, and a metric with
/// sm_metric) or a loss (a metric only).
struct pending_scalar {
    std::string name;
    double value = 0;
    double wall_time = 0;
    bool sm_metric = false;
    bool write_event = true;
};

/// The step's scalars and the hook's SageMaker metrics file.
class step_scalars {
public:
    /// Opens the metrics file in the options' directory, else $SAGEMAKER_METRICS_DIRECTORY (none
    /// when neither names one, or in a dry run).
    TDBG_DECL void open_metrics(const hook_options& options);

    /// Closes the metrics file.
    void close_metrics() noexcept {
        if (metrics_) {
            metrics_->close();
        }
    }

    /// Queues `s` for the end of the step.
    void add(pending_scalar s) { scalars_.push_back(std::move(s)); }

    /// smdebug's _save_for_tensor: a tensor saved in "losses", "metrics" or "sm_metrics" is also a
    /// SageMaker metric, its mean (by `reduce`), once per such collection of `active`.
    TDBG_DECL void queue_loss_metrics(std::string_view name, const tensor_value& value, reduction_values_function reduce,
                                      const collection_selection& selection, const active_collections& active);

    /// queue_loss_metrics for a deferred save: the metric is the value's mean, so it waits for the
    /// value here (a SageMaker metric of a device tensor costs the training thread that wait).
    TDBG_DECL void queue_deferred_metrics(std::string_view name, const collection_selection& selection,
                                          const active_collections& active, const save_plan& plan,
                                          const std::shared_ptr<deferred_cell>& cell);

    /// The scalars queued for this step, taken.
    [[nodiscard]] std::vector<pending_scalar> take() { return std::exchange(scalars_, {}); }

    /// smdebug's metrics_writer.log_metric calls: "<name>_<MODE>" of each sm_metric scalar at the
    /// mode's step `mode_step`. A metrics file that fails is closed for good, and its
    /// storage_error thrown.
    TDBG_DECL void write_metrics(const std::vector<pending_scalar>& scalars, mode m, std::int64_t mode_step);

private:
    std::vector<pending_scalar> scalars_;
    std::unique_ptr<metrics_writer> metrics_;
};

} // namespace tdbg::detail

#if TDBG_HEADER_ONLY
#include "tdbg/hook/detail/impl/step_scalars.ipp"
#endif
