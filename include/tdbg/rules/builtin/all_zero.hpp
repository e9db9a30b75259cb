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
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/tensor_selection.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// AllZero (see the file comment).
class all_zero : public rule<all_zero> {
public:
    static constexpr std::string_view rule_name = "AllZero";
    static constexpr bool parallel_steps = true;
    /// A tensor saved as reductions only is decided by its stored reductions where they can decide.
    static constexpr bool decides_by_reductions = true;
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit all_zero(trial base, const rule_params& params = rule_params());

    /// The value of every selected tensor at `step`, from each worker that wrote it.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Met when a selected tensor's value at `step` is at least `threshold` percent zeros.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs) const;

    /// The selections of the tensors it reads (what an evaluation of no step explains, see rule.hpp).
    [[nodiscard]] std::vector<const detail::tensor_selection*> tensor_selections() const { return {&selection_}; }

private:
    detail::tensor_selection selection_;
    double threshold_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/all_zero.ipp"
#endif
