#pragma once
/// \file
/// `tensor<Storage>`: one tensor of a trial, smdebug's Tensor API — its steps,
/// its value at a step, its reductions (stored, else computed), its shape and
/// the workers that wrote it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/trial/detail/trial_core.hpp"

namespace tdbg {

/// What the index says about one tensor at one step and worker (no I/O).
struct tensor_step_info {
    std::int64_t step = 0; ///< global step
    mode step_mode = mode::global;
    std::int64_t mode_step = 0;
    std::string worker;
    /// True when a value was saved (not only reductions or a shape).
    bool has_value = false;
    /// The shape recorded in the index (ReductionConfig save_shape), if any.
    std::optional<tensor_value::shape_type> stored_shape;
    /// The reductions saved for this step, sorted.
    std::vector<reduction> stored_reductions;
};

/// One tensor of a trial. A cheap handle: it shares the trial's state and
/// stays valid (and sees new steps) as long as any handle to the trial does.
template <class Storage>
class tensor {
public:
    /// The tensor's name.
    [[nodiscard]] const std::string& name() const noexcept { return record_->name(); }

    /// The steps of `m` at which the tensor was saved (mode steps; global steps
    /// for mode::global). Only complete steps unless `show_incomplete_steps`.
    [[nodiscard]] std::vector<std::int64_t> steps(mode m = mode::global, bool show_incomplete_steps = false) const {
        core_->maybe_refresh();
        return core_->tensor_steps(*record_, m, show_incomplete_steps);
    }

    /// The value at `step` of mode `m`, written by `worker` (default: the first
    /// worker in sorted order that wrote it). Throws tensor_unavailable_for_step
    /// when only reductions or a shape were saved, step_unavailable,
    /// step_not_yet_available or no_more_data when the step is not there.
    [[nodiscard]] tensor_value value(std::int64_t step, mode m = mode::global,
                                     const std::optional<std::string>& worker = std::nullopt) const {
        const detail::resolved_entry found = core_->locate(*record_, step, m, worker);
        if (!found.value) {
            throw tensor_unavailable_for_step("value of tensor '" + name() + "' is not available for " +
                                              detail::describe_step(step, m) + " as it was not saved" +
                                              (found.reductions.empty() ? std::string()
                                                                        : std::string("; its reductions were saved")) +
                                              " (trial " + core_->name() + ")");
        }
        return core_->fetch(*found.value, name(), &record_->content_hint());
    }

    /// Every complete step's value of mode `m`, by step. With `worker`, the steps
    /// that worker did not write are left out.
    [[nodiscard]] std::map<std::int64_t, tensor_value> values(mode m = mode::global,
                                                              const std::optional<std::string>& worker = std::nullopt) const {
        std::map<std::int64_t, tensor_value> out;
        for (std::int64_t step : steps(m)) {
            if (worker) {
                const auto entries = core_->entries_at(*record_, step, m);
                const bool wrote = std::any_of(entries.begin(), entries.end(),
                                               [&](const detail::resolved_entry& e) { return *e.worker == *worker; });
                if (!wrote) {
                    continue;
                }
            }
            out.emplace(step, value(step, m, worker));
        }
        return out;
    }

    /// The reduction `r` at `step`: the stored one if it was saved, else
    /// computed from the value (element-wise norms, ddof=0). Throws
    /// tensor_unavailable_for_step when neither is there.
    [[nodiscard]] tensor_value reduction_value(std::int64_t step, reduction r, mode m = mode::global,
                                               const std::optional<std::string>& worker = std::nullopt) const {
        const detail::resolved_entry found = core_->locate(*record_, step, m, worker);
        for (const auto& [which, where] : found.reductions) {
            if (which == r) {
                return core_->fetch(where, format::reduction_tensor_name(r, name()));
            }
        }
        if (!found.value) {
            throw tensor_unavailable_for_step("reduction " + reduction_name(r) + " of tensor '" + name() +
                                              "' is not available for " + detail::describe_step(step, m) +
                                              ": neither it nor the value was saved (trial " + core_->name() + ")");
        }
        return compute_reduction(core_->fetch(*found.value, name(), &record_->content_hint()), r);
    }

    /// smdebug's spelling: `reduction_value(step, "mean", mode, worker, abs)`;
    /// any spelling parse_reduction knows ("abs_l2_norm" too). Throws config_error for an unknown name.
    [[nodiscard]] tensor_value reduction_value(std::int64_t step, std::string_view reduction_name_text,
                                               mode m = mode::global,
                                               const std::optional<std::string>& worker = std::nullopt,
                                               bool abs = false) const {
        auto r = parse_reduction(reduction_name_text);
        if (!r) {
            throw config_error("unknown reduction '" + std::string(reduction_name_text) +
                               "' (expected min, max, mean, std, variance, sum, prod, l1 or l2)");
        }
        r->abs = r->abs || abs;
        return reduction_value(step, *r, m, worker);
    }

    /// The reductions saved at `step` (none are computed), keyed by reduction
    /// (smdebug's (name, abs) pairs).
    [[nodiscard]] std::map<reduction, tensor_value> reduction_values(std::int64_t step, mode m = mode::global,
                                                                     const std::optional<std::string>& worker = std::nullopt) const {
        const detail::resolved_entry found = core_->locate(*record_, step, m, worker);
        std::map<reduction, tensor_value> out;
        for (const auto& [which, where] : found.reductions) {
            out.emplace(which, core_->fetch(where, format::reduction_tensor_name(which, name())));
        }
        return out;
    }

    /// The shape at `step`: the one the index records, else the value's.
    /// Throws shape_unavailable_for_step when neither is there.
    [[nodiscard]] tensor_value::shape_type shape(std::int64_t step, mode m = mode::global,
                                                 const std::optional<std::string>& worker = std::nullopt) const {
        const detail::resolved_entry found = core_->locate(*record_, step, m, worker);
        if (found.shape) {
            return to_shape(*found.shape);
        }
        if (!found.value) {
            throw shape_unavailable_for_step("shape of tensor '" + name() + "' is not available for " +
                                             detail::describe_step(step, m) + " as it was not saved (trial " +
                                             core_->name() + ")");
        }
        return core_->fetch(*found.value, name(), &record_->content_hint()).shape();
    }

    /// The workers that saved the tensor at `step`, sorted. Throws
    /// tensor_unavailable_for_step when none did (as far as the trial knows now).
    [[nodiscard]] std::vector<std::string> workers(std::int64_t step, mode m = mode::global) const {
        std::vector<std::string> out;
        for (const auto& e : core_->entries_at(*record_, step, m)) {
            out.push_back(*e.worker);
        }
        if (out.empty()) {
            throw tensor_unavailable_for_step("tensor '" + name() + "' was not saved for " + detail::describe_step(step, m) +
                                              " (trial " + core_->name() + ")");
        }
        return out;
    }

    /// The last `n` steps of `m` up to and including `step` (all of them without `n`).
    [[nodiscard]] std::vector<std::int64_t> prev_steps(std::int64_t step, std::optional<std::size_t> n = std::nullopt,
                                                       mode m = mode::global) const {
        std::vector<std::int64_t> all = steps(m);
        all.erase(std::upper_bound(all.begin(), all.end(), step), all.end());
        if (n && *n > 0 && all.size() > *n) {
            all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(*n));
        }
        return all;
    }

    /// What the index says about each (step, worker) of `m` (complete steps
    /// only unless `show_incomplete_steps`), in step then worker order; no I/O.
    [[nodiscard]] std::vector<tensor_step_info> entries(mode m = mode::global, bool show_incomplete_steps = false) const {
        std::vector<tensor_step_info> out;
        for (std::int64_t step : steps(m, show_incomplete_steps)) {
            for (const auto& e : core_->entries_at(*record_, step, m)) {
                tensor_step_info info;
                info.step = e.step;
                info.step_mode = e.entry_mode;
                info.mode_step = e.mode_step;
                info.worker = *e.worker;
                info.has_value = e.value.has_value();
                if (e.shape) {
                    info.stored_shape = to_shape(*e.shape);
                }
                for (const auto& item : e.reductions) {
                    info.stored_reductions.push_back(item.first);
                }
                std::sort(info.stored_reductions.begin(), info.stored_reductions.end(),
                          [](reduction a, reduction b) { return reduction_name(a) < reduction_name(b); });
                out.push_back(std::move(info));
            }
        }
        return out;
    }

private:
    template <class S>
    friend class trial;

    tensor(std::shared_ptr<detail::trial_core<Storage>> core, const detail::tensor_record* record)
        : core_(std::move(core)), record_(record) {}

    static tensor_value::shape_type to_shape(const std::vector<std::int64_t>& dims) {
        tensor_value::shape_type out;
        out.reserve(dims.size());
        for (std::int64_t d : dims) {
            out.push_back(static_cast<std::size_t>(d < 0 ? 0 : d));
        }
        return out;
    }

    std::shared_ptr<detail::trial_core<Storage>> core_;
    const detail::tensor_record* record_;
};

} // namespace tdbg
