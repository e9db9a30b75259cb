#pragma once
/// \file
/// TreeDepth (XGBoost): met at a step when the model's trees are shallower
/// than `depth`: XGBoost rejected splits that did not improve the loss, so
/// the trees did not grow as deep as configured.
///
/// Parameters (AWS's published defaults): `depth` (float, 4).
/// Interpretation: the node ids are the values of the tensors whose name ends
/// in "trees/Node" (smdebug's XGBoost hook saves the model's trees_to_dataframe
/// columns as "trees/<column>"); the depth is floor(log2(largest id + 1)),
/// AWS's "base 2 logarithm of the largest node ID" made exact for complete
/// trees (ids 0..2^(d+1)-2 give depth d). A step without node ids is skipped
/// (TensorUnavailableForStep). Parallel steps.
/// What a step reads is declared (required_tensors) and fetched up front.

#include <cstdint>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/tensor_selection.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// TreeDepth (see the file comment).
class tree_depth : public rule<tree_depth> {
public:
    static constexpr std::string_view rule_name = "TreeDepth";
    static constexpr bool parallel_steps = true;
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit tree_depth(trial base, const rule_params& params = rule_params());

    /// The value of every trees/Node tensor at `step`.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Met when the trees' depth at `step` is below `depth`.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs) const;

    /// The selections of the tensors it reads (what an evaluation of no step explains, see rule.hpp).
    [[nodiscard]] std::vector<const detail::tensor_selection*> tensor_selections() const { return {&nodes_}; }

private:
    double depth_;
    detail::tensor_selection nodes_{{}, {"trees/Node$"}, false};
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/tree_depth.ipp"
#endif
