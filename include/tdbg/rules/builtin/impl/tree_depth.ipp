#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/tree_depth.hpp.

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/rules/builtin/tree_depth.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL tree_depth::tree_depth(trial base, const rule_params& params)
    : any_tensor_rule(std::move(base), params, detail::tensor_selection({}, {"trees/Node$"}, false)),
      depth_(params.get("depth", 4.0, non_negative)) {}

TDBG_DECL std::optional<verdict> tree_depth::check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs,
                                                          std::int64_t /*step*/) const {
    const step_inputs::input& in = inputs[tensor_inputs.first];
    const tensor_value* v = detail::real_value_of(inputs, in);
    if (v == nullptr) {
        return std::nullopt;
    }
    double largest = 0;
    for_each_real(*v, [&](double x) { largest = std::max(largest, x); });
    const double d = std::floor(std::log2(largest + 1.0));
    if (d < depth_) {
        return condition_met(
            fmt::format("the trees of {} are {:.6g} deep, less than {:.6g}", in.request.name, d, depth_));
    }
    return verdict(false);
}

TDBG_DECL rule_description tree_depth::describe() {
    return {"XGBoost: the trees are shallower than expected.",
            "For XGBoost. Met at a step when the model's trees are shallower than depth: XGBoost rejected the "
            "splits that did not improve the loss, so the trees did not grow as deep as configured, and a larger "
            "depth would not help.\n\nThe node ids are the values of the tensors whose names end in "
            "\"trees/Node\", as smdebug's XGBoost hook saves them; the depth is floor(log2(largest id + 1)).",
            {{"depth", "4", "the depth the trees are expected to reach"}},
            step_dependence::independent};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(template, tree_depth)
#endif
