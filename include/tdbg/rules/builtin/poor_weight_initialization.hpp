#pragma once
/// \file
/// PoorWeightInitialization: met at one of the first `steps` steps of a run
/// when the signs of a poor initialisation show: activation inputs whose
/// variances differ too much across layers, gradients with too narrow a
/// distribution, or a loss that does not go down.
///
/// Parameters (AWS's published defaults): `activation_inputs_regex` (list,
/// ".*relu_input"), `threshold` (float, 10.0), `distribution_range` (float,
/// 0.001), `patience` (int, 5), `steps` (int, 10). Interpretation, at a global
/// step among the run's first `steps` saved steps (later steps evaluate to False):
///   - activation inputs: the variances of the tensors matching the regex;
///     met when there are two or more and max / min > threshold (or min is 0
///     and max is not);
///   - gradients (the "gradients" collection): numpy.percentile 95 - 5 of each
///     gradient's values; met when the smallest is below distribution_range;
///   - loss (the "losses" collection): met when the loss is not lower than it
///     was `patience` saved steps earlier.
/// A step where none of the three can be evaluated is skipped
/// (TensorUnavailableForStep). The rule reads earlier steps but keeps no
/// state: parallel steps.
/// What a step reads is declared (required_tensors) and fetched up front, the
/// gradients and losses too (read before only when the activation check was not met).
/// What it compared (comparisons()): the steps among the first `steps` where a check could judge,
/// "0 of the first 10 steps judged"; an evaluation that judged none (its later steps evaluate to
/// False) is NothingEvaluated.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/tensor_selection.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// PoorWeightInitialization (see the file comment).
class poor_weight_initialization : public rule<poor_weight_initialization> {
public:
    static constexpr std::string_view rule_name = "PoorWeightInitialization";
    static constexpr bool parallel_steps = true;
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit poor_weight_initialization(trial base, const rule_params& params = rule_params());

    /// At one of the first `steps` steps: the activation inputs and gradients at `step`,
    /// and the losses at `step` and `patience` saved steps before.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Met when `step`, one of the first `steps`, shows a poor initialisation.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs) const;

    /// The steps among the first `steps` it judged.
    [[nodiscard]] TDBG_DECL comparison_coverage comparisons() const;

    /// The selections of the tensors it reads (what an evaluation of no step explains, see rule.hpp).
    [[nodiscard]] std::vector<const detail::tensor_selection*> tensor_selections() const { return {&activations_, &gradients_, &losses_}; }

private:
    // True when `step` is one of the run's first `steps` steps (the only ones judged).
    [[nodiscard]] TDBG_DECL bool judged(std::int64_t step) const;
    // Calls `f(name, value)` for every input of `range` with a value at its step.
    TDBG_DECL static void for_each_value(const step_inputs& inputs, detail::input_range range,
                                         const std::function<void(const std::string&, const tensor_value&)>& f);
    // The three checks, each over its inputs; each sets `evaluated` when it could judge the step.
    [[nodiscard]] TDBG_DECL verdict activation_variance(const step_inputs& inputs, detail::input_range range,
                                                        bool& evaluated) const;
    [[nodiscard]] TDBG_DECL verdict gradient_spread(const step_inputs& inputs, detail::input_range range,
                                                    bool& evaluated) const;
    [[nodiscard]] TDBG_DECL verdict loss_stalled(const step_inputs& inputs, detail::input_range range,
                                                 bool& evaluated) const;

    detail::tensor_selection activations_;
    detail::tensor_selection gradients_{{"gradients"}, {}, false};
    detail::tensor_selection losses_{{"losses"}, {}, false};
    double threshold_;
    double distribution_range_;
    std::int64_t patience_;
    std::int64_t steps_;
    detail::step_count judged_steps_; // the first steps a check could judge (steps evaluated in parallel)
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/poor_weight_initialization.ipp"
#else
TDBG_DETAIL_RULE_BASES(extern template, poor_weight_initialization)
#endif
