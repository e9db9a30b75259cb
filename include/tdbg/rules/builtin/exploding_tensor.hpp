#pragma once
/// \file
/// ExplodingTensor: met at a step when a selected tensor's value there holds a
/// NaN or (unless `only_nan`) an infinity.
///
/// Parameters (AWS's published defaults): `collection_names` (list, None),
/// `tensor_regex` (list, None), `only_nan` (bool, False). With neither list
/// every tensor is checked. Every worker's value is checked (a NaN on one
/// rank is an explosion). Only floating and complex values can be non-finite;
/// other dtypes are evaluated and never trigger. A tensor saved as reductions
/// only is decided by its stored reductions where they can decide (NaN in min,
/// max, abs_mean, l1, l2, ...; see describe()), better than smdebug, which skips
/// it; a step where no selected tensor can be evaluated is skipped
/// (TensorUnavailableForStep). Parallel steps. What a step reads (each worker's
/// value of each selected tensor, else its stored reductions) is declared
/// (required_tensors) and fetched up front.

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

/// ExplodingTensor (see the file comment).
class exploding_tensor : public detail::any_tensor_rule<exploding_tensor> {
public:
    static constexpr std::string_view rule_name = "ExplodingTensor";
    /// A tensor saved as reductions only is decided by its stored reductions where they can decide.
    static constexpr bool decides_by_reductions = true;
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit exploding_tensor(trial base, const rule_params& params = rule_params());

    /// The value of `t` at `step` from each worker that wrote it, else its stored reductions.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> tensor_requests(const tdbg::tensor& t, std::int64_t step) const;
    /// Met when the tensor of `tensor_inputs` is not finite at `step` (for some worker).
    [[nodiscard]] TDBG_DECL std::optional<verdict>
    check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs, std::int64_t step) const;

private:
    bool only_nan_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/exploding_tensor.ipp"
#else
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(extern template, exploding_tensor)
#endif
