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
#include "tdbg/rules/detail/selection_rule.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/trial/tensor.hpp"

namespace tdbg::rules {

/// UnchangedTensor (see the file comment).
class unchanged_tensor : public detail::any_tensor_rule<unchanged_tensor> {
public:
    static constexpr std::string_view rule_name = "UnchangedTensor";
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit unchanged_tensor(trial base, const rule_params& params = rule_params());

    /// The values of `t` at its last `num_steps` steps up to `step`, from each worker that wrote it at `step`.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> tensor_requests(const tdbg::tensor& t, std::int64_t step) const;
    /// Met when the last `num_steps` values of the tensor of `tensor_inputs` up to `step` are all close (for some
    /// worker).
    [[nodiscard]] TDBG_DECL std::optional<verdict>
    check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs, std::int64_t step) const;

    /// The windows of num_steps saved steps it compared.
    [[nodiscard]] TDBG_DECL comparison_coverage comparisons() const;

private:
    std::int64_t num_steps_;
    double rtol_;
    double atol_;
    bool equal_nan_;
    detail::step_count windows_; // the windows compared (per tensor and worker), steps evaluated in parallel
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/unchanged_tensor.ipp"
#else
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(extern template, unchanged_tensor)
#endif
