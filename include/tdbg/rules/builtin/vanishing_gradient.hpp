#pragma once
/// \file
/// VanishingGradient: met at a step when, for some tensor of the "gradients"
/// collection, the mean of the absolute values is below `threshold`.
///
/// Parameters (AWS's published defaults): `threshold` (float, 1e-07).
/// The mean comes from Tensor.reduction_value(step, abs mean): the stored
/// abs_mean reduction when the hook saved one, else computed from the raw
/// value. A gradient without either at this step is not evaluated; a step
/// where no gradient can be is skipped (TensorUnavailableForStep). Steps are
/// independent: evaluated in parallel.
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

/// VanishingGradient (see the file comment).
class vanishing_gradient : public detail::any_tensor_rule<vanishing_gradient> {
public:
    static constexpr std::string_view rule_name = "VanishingGradient";
    /// A tensor saved as reductions only is decided by its stored reductions where they can decide.
    static constexpr bool decides_by_reductions = true;
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `trial`, configured by `params`.
    TDBG_DECL explicit vanishing_gradient(trial base, const rule_params& params = rule_params());

    /// Met when the mean |value| of the gradient of `tensor_inputs` at `step` is below the threshold.
    [[nodiscard]] TDBG_DECL std::optional<verdict>
    check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs, std::int64_t step) const;

private:
    double threshold_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/vanishing_gradient.ipp"
#else
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(extern template, vanishing_gradient)
#endif
