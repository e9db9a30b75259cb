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
#include <optional>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/selection_rule.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/trial/tensor.hpp"

namespace tdbg::rules {

/// TreeDepth (see the file comment).
class tree_depth : public detail::any_tensor_rule<tree_depth> {
public:
    static constexpr std::string_view rule_name = "TreeDepth";
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit tree_depth(trial base, const rule_params& params = rule_params());

    /// Met when the trees of `tensor_inputs` at `step` are less than `depth` deep.
    [[nodiscard]] TDBG_DECL std::optional<verdict>
    check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs, std::int64_t step) const;

private:
    double depth_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/tree_depth.ipp"
#else
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(extern template, tree_depth)
#endif
