#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/poor_weight_initialization.hpp.

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/reduce/compute.hpp"
#include "tdbg/rules/builtin/poor_weight_initialization.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL poor_weight_initialization::poor_weight_initialization(trial base, const rule_params& params)
    : rule(std::move(base), params),
      activations_({}, params.get<std::vector<std::string>>("activation_inputs_regex", {".*relu_input"}), false),
      threshold_(params.get("threshold", 10.0, non_negative)),
      distribution_range_(params.get("distribution_range", 0.001, non_negative)),
      patience_(params.get<std::int64_t>("patience", 5, at_least(1))),
      steps_(params.get<std::int64_t>("steps", 10, at_least(1))) {}

TDBG_DECL bool poor_weight_initialization::judged(std::int64_t step) const {
    const std::vector<std::int64_t> all = base_trial().steps(mode::global, true);
    const auto index = std::lower_bound(all.begin(), all.end(), step) - all.begin();
    return index < steps_;
}

TDBG_DECL std::vector<tensor_request> poor_weight_initialization::required_tensors(std::int64_t step) const {
    std::vector<tensor_request> out;
    if (!judged(step)) {
        return out;
    }
    for (const detail::tensor_selection* selection : {&activations_, &gradients_}) {
        for (const std::string& tensor_name : selection->names(base_trial())) {
            out.push_back(value_request(tensor_name, step, true));
        }
    }
    // Each loss saved at `step` and at `patience` earlier steps: now, then the earlier one.
    for (const std::string& tensor_name : losses_.names(base_trial())) {
        const std::vector<std::int64_t> prev = tensor(tensor_name).prev_steps(step);
        if (prev.empty() || prev.back() != step || prev.size() <= static_cast<std::size_t>(patience_)) {
            continue;
        }
        const std::int64_t earlier = prev[prev.size() - 1 - static_cast<std::size_t>(patience_)];
        out.push_back(value_request(tensor_name, step, true));
        out.push_back(value_request(tensor_name, earlier, true));
    }
    return out;
}

TDBG_DECL verdict poor_weight_initialization::invoke_at_step(std::int64_t step, const step_inputs& inputs) const {
    if (!judged(step)) {
        return false;
    }
    const std::size_t activations = activations_.names(base_trial()).size();
    const std::size_t gradients = activations + gradients_.names(base_trial()).size();
    bool evaluated = false;
    verdict met = activation_variance(inputs, {0, activations}, evaluated);
    if (!met) {
        met = gradient_spread(inputs, {activations, gradients}, evaluated);
    }
    if (!met) {
        met = loss_stalled(inputs, {gradients, inputs.size()}, evaluated);
    }
    if (met || evaluated) {
        judged_steps_.add();
    }
    if (!met && !evaluated) {
        throw tensor_unavailable_for_step(
            fmt::format("rule PoorWeightInitialization: no activation input, gradient or loss at step {}", step), {},
            step, tdbg::mode::global);
    }
    return met;
}

TDBG_DECL void
poor_weight_initialization::for_each_value(const step_inputs& inputs, detail::input_range range,
                                           const std::function<void(const std::string&, const tensor_value&)>& f) {
    for (std::size_t i = range.first; i < range.last && i < inputs.size(); ++i) {
        if (const tensor_value* v = detail::value_if_saved(inputs, inputs[i])) {
            f(inputs[i].request.name, *v);
        }
    }
}

TDBG_DECL verdict poor_weight_initialization::activation_variance(const step_inputs& inputs, detail::input_range range,
                                                                  bool& evaluated) const {
    std::vector<double> variances;
    for_each_value(inputs, range, [&](const std::string&, const tensor_value& v) {
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
        return condition_met(fmt::format("activation input variances range from {:.6g} to {:.6g}", *lo, *hi));
    }
    return false;
}

TDBG_DECL verdict poor_weight_initialization::gradient_spread(const step_inputs& inputs, detail::input_range range,
                                                              bool& evaluated) const {
    double narrowest = std::numeric_limits<double>::infinity();
    std::string which;
    for_each_value(inputs, range, [&](const std::string& tensor_name, const tensor_value& v) {
        if (!is_real_valued(v.type()) || v.size() == 0) {
            return;
        }
        const std::vector<double> x = to_doubles(v);
        const double spread = percentile(x, 95.0) - percentile(x, 5.0);
        evaluated = true;
        if (spread < narrowest) {
            narrowest = spread;
            which = tensor_name;
        }
    });
    if (narrowest < distribution_range_) {
        return condition_met(fmt::format("the 5th to 95th percentile range of {} is {:.6g}", which, narrowest));
    }
    return false;
}

TDBG_DECL verdict poor_weight_initialization::loss_stalled(const step_inputs& inputs, detail::input_range range,
                                                           bool& evaluated) const {
    // Two inputs per loss: at the step, then `patience` saved steps before.
    for (std::size_t i = range.first; i + 2 <= range.last; i += 2) {
        try {
            const tensor_value& now = detail::value_of(inputs, inputs[i]);
            const tensor_value& before = detail::value_of(inputs, inputs[i + 1]);
            if (now.size() != 1 || before.size() != 1 || !is_real_valued(now.type())) {
                continue;
            }
            evaluated = true;
            if (scalar_of(now) >= scalar_of(before)) {
                return condition_met(fmt::format("{} did not decrease from step {} to step {}", inputs[i].request.name,
                                                 inputs[i + 1].request.step, inputs[i].request.step));
            }
        } catch (const tensor_unavailable_for_step&) {}
    }
    return false;
}

TDBG_DECL comparison_coverage poor_weight_initialization::comparisons() const {
    const std::uint64_t judged = judged_steps_.get();
    return {judged, fmt::format("{} of the first {} step{} judged", judged, steps_, steps_ == 1 ? "" : "s")};
}

TDBG_DECL rule_description poor_weight_initialization::describe() {
    return {"The weights look poorly initialised.",
            "Met at one of the first steps saved steps of a run when the signs of a poor initialisation show: the "
            "variances of the activation inputs differ too much across layers (the largest over the smallest "
            "exceeds threshold), the gradients are spread too narrowly (the smallest range from the 5th to the "
            "95th percentile of a gradient is below distribution_range), or the loss is not lower than it was "
            "patience saved steps earlier.\n\nActivation inputs are the tensors matching activation_inputs_regex, "
            "gradients the \"gradients\" collection, losses the \"losses\" collection. Later steps are not judged.",
            {{"activation_inputs_regex", ".*relu_input", "regular expressions of the names of activation inputs"},
             {"threshold", "10", "the largest ratio of the largest to the smallest activation input variance"},
             {"distribution_range", "0.001", "the smallest 5th to 95th percentile range of a gradient"},
             {"patience", "5", "the saved steps over which the loss must go down (at least 1)"},
             {"steps", "10", "how many of the first saved steps are judged (at least 1)"}},
            step_dependence::earlier_steps};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_RULE_BASES(template, poor_weight_initialization)
#endif
