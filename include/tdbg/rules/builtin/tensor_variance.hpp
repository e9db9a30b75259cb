#pragma once
/// \file
/// TensorVariance: met at a step when the variance of a selected tensor is
/// above `max_threshold` or below `min_threshold`.
///
/// Parameters (AWS's published defaults): `collection_names` (list, None),
/// `tensor_regex` (list, None), `max_threshold` (float, None),
/// `min_threshold` (float, None). One of the two lists is required. The
/// variance is Tensor.reduction_value(step, variance) of the first worker
/// that wrote the step: the stored reduction when saved, else computed from
/// the value (ddof=0, as numpy). A tensor with neither, or not numeric, is
/// not evaluated; a step where none can be is skipped (TensorUnavailableForStep).
/// A NaN variance triggers nothing. Parallel steps; the variances of a step are
/// declared (required_tensors) and fetched up front.

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

/// TensorVariance (see the file comment).
class tensor_variance : public detail::any_tensor_rule<tensor_variance> {
public:
    static constexpr std::string_view rule_name = "TensorVariance";
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit tensor_variance(trial base, const rule_params& params = rule_params());

    /// Met when the variance of the tensor of `tensor_inputs` at `step` is out of bounds.
    [[nodiscard]] TDBG_DECL std::optional<verdict>
    check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs, std::int64_t step) const;

private:
    std::optional<double> max_threshold_;
    std::optional<double> min_threshold_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/tensor_variance.ipp"
#else
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(extern template, tensor_variance)
#endif
