#pragma once
/// \file
/// FeatureImportanceOverweight (XGBoost): met at a step when the `nfeatures`
/// most important features hold more than `threshold` of the total importance.
///
/// Parameters (AWS's published defaults): `threshold` (float fraction, 0.8),
/// `nfeatures` (int, 3), `tensor_regex` (string, ".*feature_importance/weight").
/// Interpretation: every element of every tensor matching tensor_regex at the
/// step is one feature's importance (smdebug's XGBoost hook saves one scalar
/// per feature, "feature_importance/weight/f0", ...). With no more than
/// `nfeatures` features, or a total that is not positive, nothing is judged
/// and the step is skipped (TensorUnavailableForStep). Parallel steps.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// FeatureImportanceOverweight over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_feature_importance_overweight : public rule<basic_feature_importance_overweight<Storage>, Storage> {
    using base = rule<basic_feature_importance_overweight<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "FeatureImportanceOverweight";
    static constexpr bool parallel_steps = true;

    /// The rule over `trial`, configured by `params`.
    explicit basic_feature_importance_overweight(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), threshold_(params.get("threshold", 0.8)),
          nfeatures_(params.get<std::int64_t>("nfeatures", 3)),
          selection_({}, {params.get("tensor_regex", ".*feature_importance/weight")}, false) {
        if (nfeatures_ < 1) {
            throw config_error("rule FeatureImportanceOverweight: parameter 'nfeatures' must be at least 1");
        }
    }

    /// True when the top `nfeatures` importances at `step` are more than `threshold` of the total.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        std::vector<double> importance;
        for (const std::string& name : selection_.names(this->base_trial())) {
            try {
                const tensor_value v = this->value(name, step);
                if (is_real_valued(v.type())) {
                    for_each_real(v, [&](double x) { importance.push_back(x); });
                }
            } catch (const tensor_unavailable_for_step&) {
            }
        }
        double total = 0;
        for (double x : importance) {
            total += x;
        }
        const auto n = static_cast<std::size_t>(nfeatures_);
        if (importance.size() <= n || !(total > 0)) {
            throw tensor_unavailable_for_step("rule FeatureImportanceOverweight: " + std::to_string(importance.size()) +
                                              " feature importance(s) at step " + std::to_string(step) + ", need more than " +
                                              std::to_string(n));
        }
        std::partial_sort(importance.begin(), importance.begin() + static_cast<std::ptrdiff_t>(n), importance.end(),
                          std::greater<>());
        double top = 0;
        for (std::size_t i = 0; i < n; ++i) {
            top += importance[i];
        }
        if (top / total > threshold_) {
            this->set_reason("the top " + std::to_string(n) + " features hold " + std::to_string(top / total) +
                             " of the importance");
            return true;
        }
        return false;
    }

private:
    double threshold_;
    std::int64_t nfeatures_;
    detail::tensor_selection<Storage> selection_;
};

/// FeatureImportanceOverweight over local runs.
using feature_importance_overweight = basic_feature_importance_overweight<>;

} // namespace tdbg::rules
