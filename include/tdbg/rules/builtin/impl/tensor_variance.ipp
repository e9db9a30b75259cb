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
    : any_tensor_rule(std::move(base), params, detail::required_selection_from(params, rule_name),
                      reduction{reduction_kind::variance, false}),
      max_threshold_(params.get_optional<double>("max_threshold", non_negative)),
      min_threshold_(params.get_optional<double>("min_threshold", non_negative)) {}

TDBG_DECL std::optional<verdict> tensor_variance::check_tensor(const step_inputs& inputs,
                                                               detail::input_range tensor_inputs,
                                                               std::int64_t /*step*/) const {
    const step_inputs::input& in = inputs[tensor_inputs.first];
    if (!in.value) {
        return std::nullopt; // neither stored nor computable (strings have no variance)
    }
    const double var = scalar_of(*in.value);
    if ((max_threshold_ && var > *max_threshold_) || (min_threshold_ && var < *min_threshold_)) {
        const bool above = max_threshold_ && var > *max_threshold_;
        return condition_met(fmt::format("variance of {} = {:.6g} {} {:g}", in.request.name, var, above ? ">" : "<",
                                         above ? *max_threshold_ : *min_threshold_));
    }
    return verdict(false);
}

TDBG_DECL rule_description tensor_variance::describe() {
    return {"A tensor's variance is above or below a bound.",
            "Met at a step when the variance of a selected tensor is above max_threshold or below min_threshold: "
            "values that spread out too much (exploding) or collapse to a constant (vanishing, dead units).\n\n"
            "Give collection_names or tensor_regex (or both). The variance is the variance reduction the hook "
            "stored, else it is computed from the value over all its elements (as numpy.var). Each bound is "
            "checked only when given; a NaN variance triggers nothing.",
            detail::selection_parameters(
                true, {{"max_threshold", "None", "the largest variance allowed (None: no upper bound)"},
                       {"min_threshold", "None", "the smallest variance allowed (None: no lower bound)"}}),
            step_dependence::independent};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(template, tensor_variance)
#endif
