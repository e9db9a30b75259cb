#pragma once
/// \file
/// AllZero: met at a step when at least `threshold` percent of the elements
/// of a selected tensor's value are exactly zero.
///
/// Parameters (AWS's published defaults): `collection_names` (list, None),
/// `tensor_regex` (list, None), `threshold` (float percent, 100). One of the
/// two lists is required; their union is inspected. Every worker's value is
/// checked. String and empty values are not evaluated. A tensor saved as
/// reductions only is decided by its stored reductions where they can decide
/// (min = max = 0, abs_max = 0, ...; see describe()), better than smdebug,
/// which skips it; a step where no selected tensor can be evaluated is skipped
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

/// AllZero (see the file comment).
class all_zero : public detail::any_tensor_rule<all_zero> {
public:
    static constexpr std::string_view rule_name = "AllZero";
    /// A tensor saved as reductions only is decided by its stored reductions where they can decide.
    static constexpr bool decides_by_reductions = true;
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit all_zero(trial base, const rule_params& params = rule_params());

    /// The value of `t` at `step` from each worker that wrote it, else its stored reductions that can decide.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> tensor_requests(const tdbg::tensor& t, std::int64_t step) const;
    /// Met when the tensor of `tensor_inputs` is at least `threshold` percent zeros at `step` (for some worker).
    [[nodiscard]] TDBG_DECL std::optional<verdict>
    check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs, std::int64_t step) const;

private:
    double threshold_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/all_zero.ipp"
#else
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(extern template, all_zero)
#endif
