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
    : rule(std::move(base), params),
      selection_(detail::selection_from(params, false, {".*tanh_input|.*sigmoid_input"})),
      tanh_(thresholds(params, "tanh", number_pair{-9.4999, 9.4999})),
      sigmoid_(thresholds(params, "sigmoid", number_pair{-23.0, 16.99999})),
      threshold_inactivity_(params.get("threshold_inactivity", 1.0, non_negative)),
      threshold_layer_(params.get("threshold_layer", 50.0, non_negative)) {}

TDBG_DECL std::vector<tensor_request> saturated_activation::required_tensors(std::int64_t step) const {
    std::vector<tensor_request> out;
    for (const std::string& tensor_name : selection_.names(base_trial())) {
        // A tensor that is neither a tanh nor a sigmoid input is not evaluated (nor read).
        if (tensor_name.find("sigmoid") != std::string::npos || tensor_name.find("tanh") != std::string::npos) {
            out.push_back(value_request(tensor_name, step, true));
        }
    }
    return out;
}

TDBG_DECL verdict saturated_activation::invoke_at_step(std::int64_t step, const step_inputs& inputs) const {
    return detail::any_tensor_index(inputs.size(), step, name(), [&](std::size_t i) -> std::optional<verdict> {
        const std::string& tensor_name = inputs[i].request.name;
        const bool sigmoid = tensor_name.find("sigmoid") != std::string::npos;
        const tensor_value& v = detail::value_of(inputs, inputs[i]);
        if (!is_real_valued(v.type()) || v.size() == 0) {
            return std::nullopt;
        }
        const number_pair range = sigmoid ? sigmoid_ : tanh_;
        const double saturated = detail::inactive_unit_percent(
            v, threshold_inactivity_, [&](double x) { return x > range.first && x < range.second; });
        if (saturated > threshold_layer_) {
            return condition_met(fmt::format("{:.6g}% of the units of {} are saturated, more than {:g}%", saturated,
                                             tensor_name, threshold_layer_));
        }
        return verdict(false);
    });
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

} // namespace tdbg::rules
