#pragma once
/// \file
/// SaturatedActivation: met at a step when, in some tanh or sigmoid layer,
/// more than `threshold_layer` percent of the units are saturated: their
/// input lies inside (min, max) of the activation's thresholds for less than
/// `threshold_inactivity` percent of the samples.
///
/// Parameters (AWS's published names and defaults): `collection_names` (list,
/// None), `tensor_regex` (list, ".*tanh_input|.*sigmoid_input"),
/// `threshold_tanh_min` (float, -9.4999), `threshold_tanh_max` (float,
/// 9.4999), `threshold_sigmoid_min` (float, -23), `threshold_sigmoid_max`
/// (float, 16.99999), `threshold_inactivity` (float percent, 1.0),
/// `threshold_layer` (float percent, 50.0). Also taken, as AWS documented them
/// until 2020: the pairs `threshold_tanh` and `threshold_sigmoid` ("(min,
/// max)"), each instead of its _min and _max. A min must be below its max.
/// Interpretation: a tensor whose name contains "sigmoid" uses the sigmoid
/// thresholds, one containing "tanh" the tanh thresholds; others are not
/// evaluated. Units and samples as in DeadRelu (first dimension = batch).
/// A step with no evaluable tensor is skipped (TensorUnavailableForStep). Parallel steps.
/// What a step reads is declared (required_tensors) and fetched up front.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/selection_rule.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/rule_params.hpp"
#include "tdbg/trial/tensor.hpp"

namespace tdbg::rules {

/// SaturatedActivation (see the file comment).
class saturated_activation : public detail::any_tensor_rule<saturated_activation> {
public:
    static constexpr std::string_view rule_name = "SaturatedActivation";
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit saturated_activation(trial base, const rule_params& params = rule_params());

    /// The value of `t` at `step` when it is a tanh or sigmoid input (none otherwise).
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> tensor_requests(const tdbg::tensor& t, std::int64_t step) const;
    /// Met when the tanh or sigmoid layer of `tensor_inputs` has too many saturated units at `step`.
    [[nodiscard]] TDBG_DECL std::optional<verdict>
    check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs, std::int64_t step) const;

private:
    // The (min, max) of `activation` ("tanh", "sigmoid"): AWS's threshold_<activation>_min and _max,
    // or the pair threshold_<activation>; `fallback` for what is not given.
    [[nodiscard]] TDBG_DECL static number_pair thresholds(const rule_params& params, const std::string& activation,
                                                          number_pair fallback);

    number_pair tanh_;
    number_pair sigmoid_;
    double threshold_inactivity_;
    double threshold_layer_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/saturated_activation.ipp"
#else
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(extern template, saturated_activation)
#endif
