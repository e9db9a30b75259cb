#pragma once
/// \file
/// PoorWeightInitialization: met at one of the first `steps` steps of a run
/// when the signs of a poor initialisation show: activation inputs whose
/// variances differ too much across layers, gradients with too narrow a
/// distribution, or a loss that does not go down.
///
/// Parameters (AWS's published defaults): `activation_inputs_regex` (list,
/// ".*relu_input"), `threshold` (float, 10.0), `distribution_range` (float,
/// 0.001), `patience` (int, 5), `steps` (int, 10). Interpretation, at a global
/// step among the run's first `steps` saved steps (later steps evaluate to False):
///   - activation inputs: the variances of the tensors matching the regex;
///     met when there are two or more and max / min > threshold (or min is 0
///     and max is not);
///   - gradients (the "gradients" collection): numpy.percentile 95 - 5 of each
///     gradient's values; met when the smallest is below distribution_range;
///   - loss (the "losses" collection): met when the loss is not lower than it
///     was `patience` saved steps earlier.
/// A step where none of the three can be evaluated is skipped
/// (TensorUnavailableForStep). The rule reads earlier steps but keeps no
/// state: parallel steps.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// PoorWeightInitialization over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_poor_weight_initialization : public rule<basic_poor_weight_initialization<Storage>, Storage> {
    using base = rule<basic_poor_weight_initialization<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "PoorWeightInitialization";
    static constexpr bool parallel_steps = true;

    /// The rule over `trial`, configured by `params`.
    explicit basic_poor_weight_initialization(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params),
          activations_({}, params.get<std::vector<std::string>>("activation_inputs_regex", {".*relu_input"}), false),
          threshold_(params.get("threshold", 10.0)), distribution_range_(params.get("distribution_range", 0.001)),
          patience_(params.get<std::int64_t>("patience", 5)), steps_(params.get<std::int64_t>("steps", 10)) {
        if (patience_ < 1 || steps_ < 1) {
            throw config_error("rule PoorWeightInitialization: 'patience' and 'steps' must be at least 1");
        }
    }

    /// True when `step`, one of the first `steps`, shows a poor initialisation.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        const std::vector<std::int64_t> all = this->base_trial().steps(mode::global, true);
        const auto index = std::lower_bound(all.begin(), all.end(), step) - all.begin();
        if (index >= steps_) {
            return false;
        }
        bool evaluated = false;
        const bool met = activation_variance(step, evaluated) || gradient_spread(step, evaluated) ||
                         loss_stalled(step, evaluated);
        if (!met && !evaluated) {
            throw tensor_unavailable_for_step("rule PoorWeightInitialization: no activation input, gradient or loss at step " +
                                              std::to_string(step));
        }
        return met;
    }

private:
    template <class F>
    void for_each_value(const detail::tensor_selection<Storage>& selection, std::int64_t step, F&& f) const {
        for (const std::string& name : selection.names(this->base_trial())) {
            try {
                f(name, this->value(name, step));
            } catch (const tensor_unavailable_for_step&) {
            }
        }
    }

    bool activation_variance(std::int64_t step, bool& evaluated) const {
        std::vector<double> variances;
        for_each_value(activations_, step, [&](const std::string&, const tensor_value& v) {
            if (is_real_valued(v.type()) && v.size() > 0) {
                variances.push_back(scalar_of(compute_reduction(v, reduction{reduction_kind::variance, false})));
            }
        });
        if (variances.size() < 2) {
            return false;
        }
        evaluated = true;
        const auto [lo, hi] = std::minmax_element(variances.begin(), variances.end());
        const bool met = *lo > 0 ? *hi / *lo > threshold_ : *hi > 0;
        if (met) {
            this->set_reason("activation input variances range from " + std::to_string(*lo) + " to " + std::to_string(*hi));
        }
        return met;
    }

    bool gradient_spread(std::int64_t step, bool& evaluated) const {
        double narrowest = std::numeric_limits<double>::infinity();
        std::string which;
        for_each_value(gradients_, step, [&](const std::string& name, const tensor_value& v) {
            if (!is_real_valued(v.type()) || v.size() == 0) {
                return;
            }
            const std::vector<double> x = to_doubles(v);
            const double spread = percentile(x, 95.0) - percentile(x, 5.0);
            evaluated = true;
            if (spread < narrowest) {
                narrowest = spread;
                which = name;
            }
        });
        if (narrowest < distribution_range_) {
            this->set_reason("the 5th to 95th percentile range of " + which + " is " + std::to_string(narrowest));
            return true;
        }
        return false;
    }

    bool loss_stalled(std::int64_t step, bool& evaluated) const {
        for (const std::string& name : losses_.names(this->base_trial())) {
            auto t = this->tensor(name);
            const std::vector<std::int64_t> prev = t.prev_steps(step);
            if (prev.empty() || prev.back() != step || prev.size() <= static_cast<std::size_t>(patience_)) {
                continue;
            }
            const std::int64_t earlier = prev[prev.size() - 1 - static_cast<std::size_t>(patience_)];
            try {
                const tensor_value now = this->value(name, step);
                const tensor_value before = this->value(name, earlier);
                if (now.size() != 1 || before.size() != 1 || !is_real_valued(now.type())) {
                    continue;
                }
                evaluated = true;
                if (scalar_of(now) >= scalar_of(before)) {
                    this->set_reason(name + " did not decrease from step " + std::to_string(earlier) + " to step " +
                                     std::to_string(step));
                    return true;
                }
            } catch (const tensor_unavailable_for_step&) {
            }
        }
        return false;
    }

    detail::tensor_selection<Storage> activations_;
    detail::tensor_selection<Storage> gradients_{{"gradients"}, {}, false};
    detail::tensor_selection<Storage> losses_{{"losses"}, {}, false};
    double threshold_;
    double distribution_range_;
    std::int64_t patience_;
    std::int64_t steps_;
};

/// PoorWeightInitialization over local runs.
using poor_weight_initialization = basic_poor_weight_initialization<>;

} // namespace tdbg::rules
