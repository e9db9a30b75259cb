#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/saturated_activation.hpp.

#include <optional>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/builtin/saturated_activation.hpp"
#include "tdbg/rules/detail/activity.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL saturated_activation::saturated_activation(trial base, const rule_params& params)
    : any_tensor_rule(std::move(base), params, detail::selection_from(params, false, {".*tanh_input|.*sigmoid_input"})),
      tanh_(thresholds(params, "tanh", number_pair{-9.4999, 9.4999})),
      sigmoid_(thresholds(params, "sigmoid", number_pair{-23.0, 16.99999})),
      threshold_inactivity_(params.get("threshold_inactivity", 1.0, non_negative)),
      threshold_layer_(params.get("threshold_layer", 50.0, non_negative)) {}

TDBG_DECL std::vector<tensor_request> saturated_activation::tensor_requests(const tdbg::tensor& t,
                                                                            std::int64_t step) const {
    // A tensor that is neither a tanh nor a sigmoid input is not evaluated (nor read).
    if (t.name().find("sigmoid") == std::string::npos && t.name().find("tanh") == std::string::npos) {
        return {};
    }
    return {value_request(t.name(), step, true)};
}

TDBG_DECL std::optional<verdict> saturated_activation::check_tensor(const step_inputs& inputs,
                                                                    detail::input_range tensor_inputs,
                                                                    std::int64_t /*step*/) const {
    const step_inputs::input& in = inputs[tensor_inputs.first];
    const bool sigmoid = in.request.name.find("sigmoid") != std::string::npos;
    const tensor_value* v = detail::real_value_of(inputs, in);
    if (v == nullptr) {
        return std::nullopt;
    }
    const number_pair range = sigmoid ? sigmoid_ : tanh_;
    const double saturated = detail::inactive_unit_percent(
        *v, threshold_inactivity_, [&](double x) { return x > range.first && x < range.second; });
    if (saturated > threshold_layer_) {
        return condition_met(fmt::format("{:.6g}% of the units of {} are saturated, more than {:g}%", saturated,
                                         in.request.name, threshold_layer_));
    }
    return verdict(false);
}

TDBG_DECL number_pair saturated_activation::thresholds(const rule_params& params, const std::string& activation,
                                                       number_pair fallback) {
    const std::string pair_key = "threshold_" + activation;
    const std::string min_key = pair_key + "_min";
    const std::string max_key = pair_key + "_max";
    number_pair out;
    if (params.contains(pair_key)) {
        if (params.contains(min_key) || params.contains(max_key)) {
            throw config_error(fmt::format("rule SaturatedActivation: give {} and {}, or the pair {}, not both",
                                           min_key, max_key, pair_key));
        }
        params.declare(min_key);
        params.declare(max_key);
        out = params.get(pair_key, fallback);
        if (!(out.first < out.second)) {
            throw config_error(fmt::format("rule SaturatedActivation: parameter '{}' = ({}, {}): the minimum must be "
                                           "less than the maximum",
                                           pair_key, out.first, out.second));
        }
        return out;
    }
    params.declare(pair_key);
    out = number_pair{params.get(min_key, fallback.first), params.get(max_key, fallback.second)};
    if (!(out.first < out.second)) {
        throw config_error(fmt::format("rule SaturatedActivation: parameter '{}' = {} must be less than '{}' = {}",
                                       min_key, out.first, max_key, out.second));
    }
    return out;
}

TDBG_DECL rule_description saturated_activation::describe() {
    return {"Too many tanh or sigmoid units are saturated.",
            "Met at a step when, in some tanh or sigmoid layer, more than threshold_layer percent of the units are "
            "saturated: their input lies inside the activation's range (min, max) for fewer than "
            "threshold_inactivity percent of the samples. The gradient of a saturated unit is nearly zero: it no "
            "longer learns.\n\nA tensor whose name contains \"sigmoid\" uses the sigmoid range, one containing "
            "\"tanh\" the tanh range; other tensors are not evaluated. Units and samples count as in DeadRelu (the "
            "first dimension is the batch). The pairs threshold_tanh and threshold_sigmoid, \"(min, max)\", may be "
            "given instead of their _min and _max.",
            {{"collection_names", "None", "collections of activation inputs to check (comma-separated)"},
             {"tensor_regex", ".*tanh_input|.*sigmoid_input", "regular expressions of the names of activation inputs"},
             {"threshold_tanh_min", "-9.4999", "the lower end of the tanh range"},
             {"threshold_tanh_max", "9.4999", "the upper end of the tanh range"},
             {"threshold_sigmoid_min", "-23", "the lower end of the sigmoid range"},
             {"threshold_sigmoid_max", "16.99999", "the upper end of the sigmoid range"},
             {"threshold_tanh", "None", "the tanh range as a pair \"(min, max)\", instead of _min and _max"},
             {"threshold_sigmoid", "None", "the sigmoid range as a pair \"(min, max)\", instead of _min and _max"},
             {"threshold_inactivity", "1", "the percentage of samples below which a unit in range counts as saturated"},
             {"threshold_layer", "50", "the percentage of saturated units at which the rule is met"}},
            step_dependence::independent};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(template, saturated_activation)
#endif
