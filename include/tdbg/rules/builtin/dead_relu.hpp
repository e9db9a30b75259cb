#pragma once
/// \file
/// DeadRelu: met at a step when, in some ReLU layer, more than
/// `threshold_layer` percent of the units are dead: active (output > 0) for
/// less than `threshold_inactivity` percent of the samples.
///
/// Parameters (AWS's published defaults): `tensor_regex` (list,
/// ".*relu_output"), `threshold_inactivity` (float percent, 1.0),
/// `threshold_layer` (float percent, 50.0). Interpretation: a layer is a
/// tensor of ReLU outputs; with two or more dimensions the first is the batch
/// and every position of the others is a unit, a 0-d or 1-d tensor is one
/// sample. Tensors without a value are not evaluated; a step with none is
/// skipped (TensorUnavailableForStep). Parallel steps.
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

/// DeadRelu (see the file comment).
class dead_relu : public detail::any_tensor_rule<dead_relu> {
public:
    static constexpr std::string_view rule_name = "DeadRelu";
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit dead_relu(trial base, const rule_params& params = rule_params());

    /// Met when the ReLU layer of `tensor_inputs` has too many dead units at `step`.
    [[nodiscard]] TDBG_DECL std::optional<verdict>
    check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs, std::int64_t step) const;

private:
    double threshold_inactivity_;
    double threshold_layer_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/dead_relu.ipp"
#else
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(extern template, dead_relu)
#endif
