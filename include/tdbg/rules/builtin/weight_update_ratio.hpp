#pragma once
/// \file
/// WeightUpdateRatio: met at a step when, for some weight, the size of the
/// update relative to the weight, ||w_s - w_p|| / (||w_p|| + epsilon), is
/// above `large_threshold` or below `small_threshold`.
///
/// Parameters (AWS's published defaults): `num_steps` (int, None),
/// `large_threshold` (float, 10.0), `small_threshold` (float, 1e-08),
/// `epsilon` (float, 1e-09). Tensors: the "weights" collection. Mode: TRAIN
/// when some weight was saved in TRAIN mode, else GLOBAL; a global step of
/// another mode evaluates to False. At mode step s where the weight was saved,
/// the previous step p is the newest saved mode step before s (num_steps
/// None), or the oldest saved one in [s - num_steps, s); with no such p the
/// weight is not evaluated. Norms are Euclidean over all elements. Each worker
/// is compared with itself; met for any weight and worker. A step where no
/// weight can be evaluated is skipped (TensorUnavailableForStep). Parallel steps.

#include <algorithm>
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

/// WeightUpdateRatio over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_weight_update_ratio : public rule<basic_weight_update_ratio<Storage>, Storage> {
    using base = rule<basic_weight_update_ratio<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "WeightUpdateRatio";
    static constexpr bool parallel_steps = true;

    /// The rule over `trial`, configured by `params`.
    explicit basic_weight_update_ratio(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), num_steps_(params.get_optional<std::int64_t>("num_steps")),
          large_threshold_(params.get("large_threshold", 10.0)), small_threshold_(params.get("small_threshold", 1e-08)),
          epsilon_(params.get("epsilon", 1e-09)) {
        if (num_steps_ && *num_steps_ < 1) {
            throw config_error("rule WeightUpdateRatio: parameter 'num_steps' must be at least 1, got " +
                               std::to_string(*num_steps_));
        }
    }

    /// True when some weight's update ratio at `step` is out of bounds.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        const std::vector<std::string> names = weights_.names(this->base_trial());
        mode m = mode::global;
        for (const std::string& name : names) {
            if (!this->tensor(name).steps(mode::train).empty()) {
                m = mode::train;
                break;
            }
        }
        std::int64_t s = step;
        if (m != mode::global) {
            if (this->base_trial().mode_of(step) != m) {
                return false;
            }
            s = this->base_trial().mode_step(step).value_or(step);
        }
        return detail::any_tensor(names, step, this->name(),
                                  [&](const std::string& name) { return out_of_bounds(name, s, m); });
    }

private:
    [[nodiscard]] std::optional<bool> out_of_bounds(const std::string& name, std::int64_t s, mode m) const {
        auto t = this->tensor(name);
        const std::vector<std::int64_t> steps = t.steps(m);
        auto at = std::lower_bound(steps.begin(), steps.end(), s);
        if (at == steps.end() || *at != s || at == steps.begin()) {
            return std::nullopt;
        }
        std::int64_t p = *(at - 1);
        if (num_steps_) {
            auto oldest = std::lower_bound(steps.begin(), at, s - *num_steps_);
            if (oldest == at) {
                return std::nullopt;
            }
            p = *oldest;
        }
        bool evaluated = false;
        for (const std::string& worker : t.workers(s, m)) {
            tensor_value now;
            tensor_value before;
            try {
                now = this->value(name, s, m, worker);
                before = this->value(name, p, m, worker);
            } catch (const tensor_unavailable_for_step&) {
                continue;
            } catch (const invalid_worker&) {
                continue;
            }
            if (!is_real_valued(now.type()) || now.size() != before.size()) {
                continue;
            }
            evaluated = true;
            const double ratio = l2_distance(now, before) / (l2_norm(before) + epsilon_);
            if (ratio > large_threshold_ || ratio < small_threshold_) {
                this->set_reason(detail::concat("update ratio of ", name, " (", worker, ") = ", std::to_string(ratio)));
                return true;
            }
        }
        return evaluated ? std::optional<bool>(false) : std::nullopt;
    }

    std::optional<std::int64_t> num_steps_;
    double large_threshold_;
    double small_threshold_;
    double epsilon_;
    detail::tensor_selection<Storage> weights_{{"weights"}, {}, false};
};

/// WeightUpdateRatio over local runs.
using weight_update_ratio = basic_weight_update_ratio<>;

} // namespace tdbg::rules
