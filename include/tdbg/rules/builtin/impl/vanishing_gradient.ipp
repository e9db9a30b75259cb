#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/vanishing_gradient.hpp.

#include <optional>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/reduction.hpp"
#include "tdbg/rules/builtin/vanishing_gradient.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL vanishing_gradient::vanishing_gradient(trial base, const rule_params& params)
    : any_tensor_rule(std::move(base), params, detail::tensor_selection({"gradients"}, {}, false),
                      reduction{reduction_kind::mean, true}), // stored when the hook saved it, else computed
      threshold_(params.get("threshold", 1e-07, non_negative)) {}

TDBG_DECL std::optional<verdict> vanishing_gradient::check_tensor(const step_inputs& inputs,
                                                                  detail::input_range tensor_inputs,
                                                                  std::int64_t /*step*/) const {
    const step_inputs::input& in = inputs[tensor_inputs.first];
    const double mean = scalar_of(detail::value_of(inputs, in));
    if (mean < threshold_) {
        return condition_met(fmt::format("mean |{}| = {:.6g} < {:g}", in.request.name, mean, threshold_));
    }
    return verdict(false);
}

TDBG_DECL rule_description vanishing_gradient::describe() {
    return {"Gradients vanish: a gradient's mean absolute value falls below a threshold.",
            "Met at a step when some tensor of the \"gradients\" collection has a mean absolute value below "
            "threshold: the gradients have become so small that the weights barely change, and training stalls.\n\n"
            "The mean is the abs_mean reduction the hook stored, else it is computed from the saved value. A "
            "gradient with neither at a step is not evaluated; a step where no gradient can be is skipped.",
            {{"threshold", "1e-07", "the mean |gradient| below which a gradient has vanished"}},
            step_dependence::independent, worker_reads::first_worker};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(template, vanishing_gradient)
#endif
