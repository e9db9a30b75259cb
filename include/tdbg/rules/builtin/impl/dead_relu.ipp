#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/dead_relu.hpp.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/rules/builtin/dead_relu.hpp"
#include "tdbg/rules/detail/activity.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL dead_relu::dead_relu(trial base, const rule_params& params)
    : any_tensor_rule(
          std::move(base), params,
          detail::tensor_selection({}, params.get<std::vector<std::string>>("tensor_regex", {".*relu_output"}), false)),
      threshold_inactivity_(params.get("threshold_inactivity", 1.0, non_negative)),
      threshold_layer_(params.get("threshold_layer", 50.0, non_negative)) {}

TDBG_DECL std::optional<verdict> dead_relu::check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs,
                                                         std::int64_t /*step*/) const {
    const step_inputs::input& in = inputs[tensor_inputs.first];
    const tensor_value* v = detail::real_value_of(inputs, in);
    if (v == nullptr) {
        return std::nullopt;
    }
    const double dead = detail::inactive_unit_percent(*v, threshold_inactivity_, [](double x) { return x > 0.0; });
    if (dead > threshold_layer_) {
        return condition_met(fmt::format("{:.6g}% of the units of {} are dead (active in less than {:g}% of the "
                                         "samples), more than {:g}%",
                                         dead, in.request.name, threshold_inactivity_, threshold_layer_));
    }
    return verdict(false);
}

TDBG_DECL rule_description dead_relu::describe() {
    return {"Too many ReLU units are dead (almost never active).",
            "Met at a step when, in some ReLU layer, more than threshold_layer percent of the units are dead: "
            "active (output above 0) for fewer than threshold_inactivity percent of the samples of the batch. A "
            "dead unit no longer learns.\n\nA layer is a tensor matching tensor_regex. With two or more dimensions "
            "the first is the batch and every position of the others is a unit; a tensor of fewer dimensions is "
            "one sample.",
            {{"tensor_regex", ".*relu_output", "regular expressions of the names of ReLU outputs (comma-separated)"},
             {"threshold_inactivity", "1", "the percentage of samples below which an active unit counts as dead"},
             {"threshold_layer", "50", "the percentage of dead units at which the rule is met"}},
            step_dependence::independent};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(template, dead_relu)
#endif
