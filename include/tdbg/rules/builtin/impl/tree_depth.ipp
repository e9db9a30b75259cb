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
    : rule(std::move(base), params), depth_(params.get("depth", 4.0, non_negative)) {}

TDBG_DECL std::vector<tensor_request> tree_depth::required_tensors(std::int64_t step) const {
    return nodes_.value_requests(base_trial(), step);
}

TDBG_DECL verdict tree_depth::invoke_at_step(std::int64_t step, const step_inputs& inputs) const {
    return detail::any_tensor_index(inputs.size(), step, name(), [&](std::size_t i) -> std::optional<verdict> {
        const std::string& tensor_name = inputs[i].request.name;
        const tensor_value& v = detail::value_of(inputs, inputs[i]);
        if (!is_real_valued(v.type()) || v.size() == 0) {
            return std::nullopt;
        }
        double largest = 0;
        for_each_real(v, [&](double x) { largest = std::max(largest, x); });
        const double d = std::floor(std::log2(largest + 1.0));
        if (d < depth_) {
            return condition_met(
                fmt::format("the trees of {} are {:.6g} deep, less than {:.6g}", tensor_name, d, depth_));
        }
        return verdict(false);
    });
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
