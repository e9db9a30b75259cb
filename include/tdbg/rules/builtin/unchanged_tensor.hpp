#pragma once
/// \file
/// UnchangedTensor: met at a step when a selected tensor no longer changes:
/// its values at the last `num_steps` steps where it was saved (up to and
/// including this one; they need not be consecutive) are all numpy.allclose.
///
/// Parameters (AWS's published defaults): `collection_names` (list, None),
/// `tensor_regex` (list, None), `num_steps` (int, 3), `rtol` (float, 1e-05),
/// `atol` (float, 1e-08), `equal_nan` (bool, False). One of the two lists is
/// required. Steps of every mode count (global steps, Tensor.prev_steps).
/// A tensor saved at fewer than `num_steps` steps so far, or without a value
/// at this step, is not evaluated. Met when, for some worker, every
/// consecutive pair of those values is allclose (exact equality for strings;
/// a changed shape is a change); a worker missing one of the steps is not
/// evaluated. A step where no tensor can be is skipped (TensorUnavailableForStep).
/// Parallel steps (the rule keeps no state; it reads the earlier steps).
/// What a step reads (each worker's values at the last num_steps steps) is declared
/// (required_tensors) and fetched up front.
/// What it compared (comparisons()): the windows of num_steps saved steps, per tensor and
/// worker, "0 windows of 3 saved steps"; an evaluation without one is NothingEvaluated.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/tensor_selection.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// UnchangedTensor (see the file comment).
class unchanged_tensor : public rule<unchanged_tensor> {
public:
    static constexpr std::string_view rule_name = "UnchangedTensor";
    static constexpr bool parallel_steps = true;
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit unchanged_tensor(trial base, const rule_params& params = rule_params());

    /// The values of every selected tensor at its last `num_steps` steps up to `step`,
    /// from each worker that wrote it at `step`.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Met when a selected tensor's last `num_steps` values are all close.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs) const;

    /// The windows of num_steps saved steps it compared.
    [[nodiscard]] TDBG_DECL comparison_coverage comparisons() const;

    /// The selections of the tensors it reads (what an evaluation of no step explains, see rule.hpp).
    [[nodiscard]] std::vector<const detail::tensor_selection*> tensor_selections() const { return {&selection_}; }

private:
    // Whether the tensor of `tensor_inputs` (num_steps values per worker) stayed unchanged up to
    // `step`; nullopt: it cannot be evaluated.
    [[nodiscard]] TDBG_DECL std::optional<verdict>
    unchanged(const step_inputs& inputs, detail::input_range tensor_inputs, std::int64_t step) const;

    detail::tensor_selection selection_;
    std::int64_t num_steps_;
    double rtol_;
    double atol_;
    bool equal_nan_;
    detail::step_count windows_; // the windows compared (per tensor and worker), steps evaluated in parallel
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/unchanged_tensor.ipp"
#endif
