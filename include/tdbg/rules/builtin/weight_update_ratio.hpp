#pragma once
/// \file
/// WeightUpdateRatio: met at a step when, for some weight, the size of the
/// update relative to the weight, ||w_s - w_p|| / (||w_p|| + epsilon), is
/// above `large_threshold` or below `small_threshold`.
///
/// Parameters (AWS's published defaults): `num_steps` (int, None),
/// `large_threshold` (float, 10.0), `small_threshold` (float, 1e-08),
/// `epsilon` (float, 1e-09). Tensors: the "weights" collection. Mode: TRAIN
/// when some weight was saved in TRAIN mode, else GLOBAL; a global step of
/// another mode evaluates to False. At mode step s where the weight was saved,
/// the previous step p is the newest saved mode step before s (num_steps
/// None), or the oldest saved one in [s - num_steps, s); with no such p the
/// weight is not evaluated. Norms are Euclidean over all elements. Each worker
/// is compared with itself; met for any weight and worker. A step where no
/// weight can be evaluated is skipped (TensorUnavailableForStep). Parallel steps.
/// What a step reads (each worker's values at both steps) is declared
/// (required_tensors) and fetched up front.
/// What it compared (comparisons()): the steps of its mode and the pairs of steps compared (per
/// weight and worker), "3 TRAIN steps, 0 pairs of steps"; an evaluation without a pair is
/// NothingEvaluated (a weight saved once, the other steps of another mode).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/selection_rule.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// WeightUpdateRatio (see the file comment).
class weight_update_ratio : public detail::selection_rule<weight_update_ratio> {
public:
    static constexpr std::string_view rule_name = "WeightUpdateRatio";
    static constexpr bool parallel_steps = true;
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit weight_update_ratio(trial base, const rule_params& params = rule_params());

    /// The values of every weight at `step` and at the step it is compared with, from each worker.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Met when some weight's update ratio at `step` is out of bounds.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs) const;

    /// The steps of its mode it looked at and the pairs of steps it compared.
    [[nodiscard]] TDBG_DECL comparison_coverage comparisons() const;

private:
    // The mode the weights are compared in (TRAIN when one of `names` has training steps, else
    // GLOBAL) and `step`'s step in it; nullopt when `step` is of another mode.
    [[nodiscard]] TDBG_DECL std::optional<std::pair<mode, std::int64_t>>
    mode_step(const std::vector<std::string>& names, std::int64_t step) const;
    // The step of `m` that `t` at mode step `s` is compared with; nullopt: not evaluable.
    [[nodiscard]] TDBG_DECL std::optional<std::int64_t> compared_step(const tdbg::tensor& t, std::int64_t s,
                                                                      mode m) const;
    // Whether the update of the tensor of `tensor_inputs` (now and before, per worker) is out
    // of bounds; nullopt: not evaluable.
    [[nodiscard]] TDBG_DECL std::optional<verdict> out_of_bounds(const step_inputs& inputs,
                                                                 detail::input_range tensor_inputs) const;

    std::optional<std::int64_t> num_steps_;
    double large_threshold_;
    double small_threshold_;
    double epsilon_;
    detail::step_count mode_steps_; // the steps of its mode looked at (steps evaluated in parallel)
    detail::step_count pairs_; // the pairs of steps compared, per weight and worker
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/weight_update_ratio.ipp"
#else
TDBG_DETAIL_SELECTION_RULE_BASES(extern template, weight_update_ratio)
#endif
