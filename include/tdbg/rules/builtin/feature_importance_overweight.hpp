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
/// What a step reads is declared (required_tensors) and fetched up front.

#include <cstdint>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/selection_rule.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// FeatureImportanceOverweight (see the file comment).
class feature_importance_overweight : public detail::selection_rule<feature_importance_overweight> {
public:
    static constexpr std::string_view rule_name = "FeatureImportanceOverweight";
    static constexpr bool parallel_steps = true;
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit feature_importance_overweight(trial base, const rule_params& params = rule_params());

    /// The value of every selected feature importance tensor at `step`.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Met when the top `nfeatures` importances at `step` are more than `threshold` of the total.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs) const;

private:
    double threshold_;
    std::int64_t nfeatures_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/feature_importance_overweight.ipp"
#else
TDBG_DETAIL_SELECTION_RULE_BASES(extern template, feature_importance_overweight)
#endif
