#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/tensor_variance.hpp.

#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/rules/builtin/tensor_variance.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL tensor_variance::tensor_variance(trial base, const rule_params& params)
    : rule(std::move(base), params), selection_(detail::selection_from(params, false)),
      max_threshold_(params.get_optional<double>("max_threshold", non_negative)),
      min_threshold_(params.get_optional<double>("min_threshold", non_negative)) {
    if (selection_.unspecified()) {
        throw config_error("rule TensorVariance: give collection_names or tensor_regex (or both)");
    }
}

TDBG_DECL std::vector<tensor_request> tensor_variance::required_tensors(std::int64_t step) const {
    std::vector<tensor_request> out;
    for (const std::string& name : selection_.names(base_trial())) {
        out.push_back(reduction_request(name, step, reduction{reduction_kind::variance, false}, true));
    }
    return out;
}

TDBG_DECL verdict tensor_variance::invoke_at_step(std::int64_t step, const step_inputs& inputs) const {
    return detail::any_tensor_index(inputs.size(), step, name(), [&](std::size_t i) -> std::optional<verdict> {
        const step_inputs::input& in = inputs[i];
        if (!in.value) {
            return std::nullopt; // neither stored nor computable (strings have no variance)
        }
        const double var = scalar_of(*in.value);
        if ((max_threshold_ && var > *max_threshold_) || (min_threshold_ && var < *min_threshold_)) {
            const bool above = max_threshold_ && var > *max_threshold_;
            return condition_met(fmt::format("variance of {} = {:.6g} {} {:g}", in.request.name, var,
                                             above ? ">" : "<", above ? *max_threshold_ : *min_threshold_));
        }
        return verdict(false);
    });
}

TDBG_DECL rule_description tensor_variance::describe() {
    return {"A tensor's variance is above or below a bound.",
            "Met at a step when the variance of a selected tensor is above max_threshold or below min_threshold: "
            "values that spread out too much (exploding) or collapse to a constant (vanishing, dead units).\n\n"
            "Give collection_names or tensor_regex (or both). The variance is the variance reduction the hook "
            "stored, else it is computed from the value over all its elements (as numpy.var). Each bound is "
            "checked only when given; a NaN variance triggers nothing.",
            {{"collection_names", "None", "collections whose tensors are checked (this or tensor_regex is required)"},
             {"tensor_regex", "None", "regular expressions of tensor names (this or collection_names is required)"},
             {"max_threshold", "None", "the largest variance allowed (None: no upper bound)"},
             {"min_threshold", "None", "the smallest variance allowed (None: no lower bound)"}},
            step_dependence::independent};
}

} // namespace tdbg::rules
