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
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/tensor_selection.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// ExplodingTensor (see the file comment).
class exploding_tensor : public rule<exploding_tensor> {
public:
    static constexpr std::string_view rule_name = "ExplodingTensor";
    static constexpr bool parallel_steps = true;
    /// A tensor saved as reductions only is decided by its stored reductions where they can decide.
    static constexpr bool decides_by_reductions = true;
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit exploding_tensor(trial base, const rule_params& params = rule_params());

    /// The value of every selected tensor at `step`, from each worker that wrote it.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Met when a selected tensor's value at `step` is not finite.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs) const;

    /// The selections of the tensors it reads (what an evaluation of no step explains, see rule.hpp).
    [[nodiscard]] std::vector<const detail::tensor_selection*> tensor_selections() const { return {&selection_}; }

private:
    detail::tensor_selection selection_;
    bool only_nan_;
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/exploding_tensor.ipp"
#endif
