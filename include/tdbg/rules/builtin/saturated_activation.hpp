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
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/tensor_selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/rule_params.hpp"

namespace tdbg::rules {

/// SaturatedActivation (see the file comment).
class saturated_activation : public rule<saturated_activation> {
public:
    static constexpr std::string_view rule_name = "SaturatedActivation";
    static constexpr bool parallel_steps = true;
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit saturated_activation(trial base, const rule_params& params = rule_params());

    /// The value of every selected tanh or sigmoid input at `step`.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Met when some tanh or sigmoid layer at `step` has too many saturated units.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs) const;

    /// The selections of the tensors it reads (what an evaluation of no step explains, see rule.hpp).
    [[nodiscard]] std::vector<const detail::tensor_selection*> tensor_selections() const { return {&selection_}; }

private:
    // The (min, max) of `activation` ("tanh", "sigmoid"): AWS's threshold_<activation>_min and _max,
    // or the pair threshold_<activation>; `fallback` for what is not given.
    [[nodiscard]] TDBG_DECL static number_pair thresholds(const rule_params& params, const std::string& activation,
                                                          number_pair fallback);

    detail::tensor_selection selection_;
    number_pair tanh_;
    number_pair sigmoid_;
    double threshold_inactivity_;
    double threshold_layer_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/saturated_activation.ipp"
#endif
