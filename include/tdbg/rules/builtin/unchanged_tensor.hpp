#pragma once
/// \file
/// UnchangedTensor: met at a step when a selected tensor no longer changes:
/// its values at the last `num_steps` steps where it was saved (up to and
/// including this one; they need not be consecutive) are all numpy.allclose.
///
/// Parameters (AWS's published defaults): `collection_names` (list, None),
/// `tensor_regex` (list, None), `num_steps` (int, 3), `rtol` (float, 1e-05),
/// `atol` (float, 1e-08), `equal_nan` (bool, False). One of the two lists is
/// required. Steps of every mode count (global steps, Tensor.prev_steps).
/// A tensor saved at fewer than `num_steps` steps so far, or without a value
/// at this step, is not evaluated. Met when, for some worker, every
/// consecutive pair of those values is allclose (exact equality for strings;
/// a changed shape is a change); a worker missing one of the steps is not
/// evaluated. A step where no tensor can be is skipped (TensorUnavailableForStep).
/// Parallel steps (the rule keeps no state; it reads the earlier steps).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// UnchangedTensor over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_unchanged_tensor : public rule<basic_unchanged_tensor<Storage>, Storage> {
    using base = rule<basic_unchanged_tensor<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "UnchangedTensor";
    static constexpr bool parallel_steps = true;

    /// The rule over `trial`, configured by `params`.
    explicit basic_unchanged_tensor(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), selection_(detail::selection_from<Storage>(params, false)),
          num_steps_(params.get<std::int64_t>("num_steps", 3)), rtol_(params.get("rtol", 1e-05)),
          atol_(params.get("atol", 1e-08)), equal_nan_(params.get("equal_nan", false)) {
        if (selection_.unspecified()) {
            throw config_error("rule UnchangedTensor: give collection_names or tensor_regex (or both)");
        }
        if (num_steps_ < 2) {
            throw config_error("rule UnchangedTensor: parameter 'num_steps' must be at least 2, got " +
                               std::to_string(num_steps_));
        }
    }

    /// True when a selected tensor's last `num_steps` values are all close.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        return detail::any_tensor(selection_.names(this->base_trial()), step, this->name(),
                                  [&](const std::string& name) { return unchanged(name, step); });
    }

private:
    [[nodiscard]] std::optional<bool> unchanged(const std::string& name, std::int64_t step) const {
        auto t = this->tensor(name);
        const std::vector<std::int64_t> prev = t.prev_steps(step, static_cast<std::size_t>(num_steps_));
        if (prev.empty() || prev.back() != step || prev.size() < static_cast<std::size_t>(num_steps_)) {
            return std::nullopt;
        }
        bool evaluated = false;
        for (const std::string& worker : t.workers(step)) {
            std::vector<tensor_value> values;
            try {
                for (std::int64_t s : prev) {
                    values.push_back(this->value(name, s, mode::global, worker));
                }
            } catch (const tensor_unavailable_for_step&) {
                continue;
            } catch (const invalid_worker&) {
                continue; // this worker did not write one of the steps
            }
            evaluated = true;
            bool same = true;
            for (std::size_t i = 1; i < values.size() && same; ++i) {
                same = allclose(values[i], values[i - 1], rtol_, atol_, equal_nan_);
            }
            if (same) {
                this->set_reason(detail::concat(name, " (", worker, ") unchanged over steps ", std::to_string(prev.front()),
                                                "..", std::to_string(step)));
                return true;
            }
        }
        return evaluated ? std::optional<bool>(false) : std::nullopt;
    }

    detail::tensor_selection<Storage> selection_;
    std::int64_t num_steps_;
    double rtol_;
    double atol_;
    bool equal_nan_;
};

/// UnchangedTensor over local runs.
using unchanged_tensor = basic_unchanged_tensor<>;

} // namespace tdbg::rules
