#pragma once
/// \file
/// Definitions of tdbg/hook/detail/step_scalars.hpp.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/hook/collection.hpp"
#include "tdbg/hook/detail/histogram.hpp"
#include "tdbg/hook/detail/step_scalars.hpp"
#include "tdbg/reduce/reduction_value.hpp"

namespace tdbg::detail {

namespace step_scalars_parts {

// The metrics directory: the option, else $SAGEMAKER_METRICS_DIRECTORY.
[[nodiscard]] TDBG_DECL std::optional<std::string> metrics_dir(const hook_options& options) {
    if (options.sagemaker_metrics_dir) {
        return options.sagemaker_metrics_dir->empty() ? std::nullopt : options.sagemaker_metrics_dir;
    }
    if (const char* env = std::getenv(sagemaker_metrics_env); env != nullptr && *env != '\0') {
        return std::string(env);
    }
    return std::nullopt;
}

// True for the collections whose tensors are SageMaker metrics too.
[[nodiscard]] TDBG_DECL bool is_metric_collection(const std::string& c) {
    return c == collection_names::losses || c == collection_names::metrics || c == collection_names::sm_metrics;
}

} // namespace step_scalars_parts

TDBG_DECL double now_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TDBG_DECL void step_scalars::open_metrics(const hook_options& options) {
    if (options.dry_run) {
        return;
    }
    if (auto dir = step_scalars_parts::metrics_dir(options)) {
        metrics_ = std::make_unique<metrics_writer>(*dir);
    }
}

TDBG_DECL void step_scalars::queue_loss_metrics(std::string_view name, const tensor_value& value,
                                                reduction_values_function reduce, const collection_selection& selection,
                                                const active_collections& active) {
    if (!metrics_ || value.size() == 0) {
        return;
    }
    for (const std::size_t i : active) {
        if (!step_scalars_parts::is_metric_collection(selection.at(i).coll.name())) {
            continue;
        }
        double mean = 0;
        try {
            std::vector<reduction_value> result;
            reduce(value, {reduction{reduction_kind::mean, false}}, {}, result);
            mean = scalar_as_double(result.front().to_tensor());
        } catch (const dtype_mismatch&) {
            return; // no mean of strings
        }
        scalars_.push_back(pending_scalar{std::string(name), mean, now_seconds(), true, false});
    }
}

TDBG_DECL void step_scalars::queue_deferred_metrics(std::string_view name, const collection_selection& selection,
                                                    const active_collections& active, const save_plan& plan,
                                                    const std::shared_ptr<deferred_cell>& cell) {
    if (!metrics_ || !plan.raw) {
        return;
    }
    const bool metric = std::any_of(active.begin(), active.end(), [&](std::size_t i) {
        return step_scalars_parts::is_metric_collection(selection.at(i).coll.name());
    });
    if (!metric) {
        return;
    }
    try {
        queue_loss_metrics(name, *cell->get().raw, &compute_reduction_values, selection, active);
    } catch (const error&) {
        // The writer meets the same error at this tensor's records and reports it by the policy.
    }
}

TDBG_DECL void step_scalars::write_metrics(const std::vector<pending_scalar>& scalars, mode m,
                                           std::int64_t mode_step) {
    if (!metrics_) {
        return;
    }
    try {
        for (const pending_scalar& s : scalars) {
            if (s.sm_metric) {
                metrics_->log(s.name + "_" + std::string(mode_name(m)), s.value, s.wall_time, mode_step);
            }
        }
    } catch (const storage_error&) {
        metrics_.reset();
        throw;
    }
}

} // namespace tdbg::detail
