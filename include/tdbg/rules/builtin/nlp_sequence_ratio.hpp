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
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/tensor_selection.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// NLPSequenceRatio (see the file comment).
class nlp_sequence_ratio : public rule<nlp_sequence_ratio> {
public:
    static constexpr std::string_view rule_name = "NLPSequenceRatio";
    static constexpr bool parallel_steps = true;
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit nlp_sequence_ratio(trial base, const rule_params& params = rule_params());

    /// The value of every selected tensor at `step`.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Met when a token's share of some sequence tensor at `step` is above its threshold.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs) const;

    /// The selections of the tensors it reads (what an evaluation of no step explains, see rule.hpp).
    [[nodiscard]] std::vector<const detail::tensor_selection*> tensor_selections() const { return {&selection_}; }

private:
    detail::tensor_selection selection_;
    std::vector<double> tokens_;
    std::vector<double> thresholds_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/nlp_sequence_ratio.ipp"
#endif
