#pragma once
/// \file
/// NLPSequenceRatio: met at a step when some token makes up too much of the
/// input sequences: the percentage of elements equal to `token_values[i]`
/// exceeds `token_thresholds_percent[i]` (padding or unknown-word tokens).
///
/// Parameters (AWS's published defaults): `tensor_regex` (list,
/// ".*embedding0_input_0"), `token_values` (list of numbers, "0"),
/// `token_thresholds_percent` (list of floats, "50"; one threshold applies
/// to every token, else one per token). Tensors without a value are not
/// evaluated; a step with none is skipped (TensorUnavailableForStep).
/// Parallel steps.
/// What a step reads is declared (required_tensors) and fetched up front.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/selection_rule.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/trial/tensor.hpp"

namespace tdbg::rules {

/// NLPSequenceRatio (see the file comment).
class nlp_sequence_ratio : public detail::any_tensor_rule<nlp_sequence_ratio> {
public:
    static constexpr std::string_view rule_name = "NLPSequenceRatio";
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit nlp_sequence_ratio(trial base, const rule_params& params = rule_params());

    /// Met when a token's share of the sequence tensor of `tensor_inputs` at `step` is above its threshold.
    [[nodiscard]] TDBG_DECL std::optional<verdict>
    check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs, std::int64_t step) const;

private:
    std::vector<double> tokens_;
    std::vector<double> thresholds_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/nlp_sequence_ratio.ipp"
#else
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(extern template, nlp_sequence_ratio)
#endif
