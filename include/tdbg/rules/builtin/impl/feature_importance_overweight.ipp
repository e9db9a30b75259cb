#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/feature_importance_overweight.hpp.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/builtin/feature_importance_overweight.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL feature_importance_overweight::feature_importance_overweight(trial base, const rule_params& params)
    : selection_rule(std::move(base), params,
                     detail::tensor_selection({}, {params.get("tensor_regex", ".*feature_importance/weight")}, false)),
      threshold_(params.get("threshold", 0.8, non_negative)),
      nfeatures_(params.get<std::int64_t>("nfeatures", 3, at_least(1))) {}

TDBG_DECL std::vector<tensor_request> feature_importance_overweight::required_tensors(std::int64_t step) const {
    return selection().value_requests(base_trial(), step);
}

TDBG_DECL verdict feature_importance_overweight::invoke_at_step(std::int64_t step, const step_inputs& inputs) const {
    std::vector<double> importance;
    for (const step_inputs::input& in : inputs) {
        const tensor_value* v = detail::value_if_saved(inputs, in);
        if (v != nullptr && is_real_valued(v->type())) {
            for_each_real(*v, [&](double x) { importance.push_back(x); });
        }
    }
    double total = 0;
    for (double x : importance) {
        total += x;
    }
    const auto n = static_cast<std::size_t>(nfeatures_);
    if (importance.size() <= n || !(total > 0)) {
        throw tensor_unavailable_for_step(
            fmt::format("rule FeatureImportanceOverweight: {} feature importance(s) at step {}, need more than {}",
                        importance.size(), step, n),
            {}, step, tdbg::mode::global);
    }
    std::partial_sort(importance.begin(), importance.begin() + static_cast<std::ptrdiff_t>(n), importance.end(),
                      std::greater<>());
    double top = 0;
    for (std::size_t i = 0; i < n; ++i) {
        top += importance[i];
    }
    if (top / total > threshold_) {
        return condition_met(fmt::format("the top {} features hold {:.6g} of the importance", n, top / total));
    }
    return false;
}

TDBG_DECL rule_description feature_importance_overweight::describe() {
    return {"XGBoost: a few features carry most of the importance.",
            "For XGBoost. Met at a step when the nfeatures most important features hold more than threshold of the "
            "total feature importance: the model leans on a few features.\n\nEvery element of every tensor "
            "matching tensor_regex is one feature's importance (smdebug's XGBoost hook saves one per feature). "
            "With no more than nfeatures features, or a total that is not positive, the step is skipped.",
            {{"threshold", "0.8", "the largest share of the total importance the top features may hold"},
             {"nfeatures", "3", "how many of the most important features are summed (at least 1)"},
             {"tensor_regex", ".*feature_importance/weight", "regular expression of feature importance names"}},
            step_dependence::independent};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_SELECTION_RULE_BASES(template, feature_importance_overweight)
#endif
