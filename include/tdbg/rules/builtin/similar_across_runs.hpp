#pragma once
/// \file
/// SimilarAcrossRuns: compares a run with another one and is met at a step
/// where a selected tensor differs between the two (numpy.allclose with its
/// default tolerances fails): runs that should be alike have diverged.
///
/// Parameters (AWS's published names and defaults): `other_trials` (the other
/// run's path or URL, where SageMaker takes a training job's name; required
/// unless the other trial is passed in, as the registry's `others`),
/// `collection_names` (list, None), `tensor_regex` (list, None; with neither,
/// every tensor). `other_trial`, AWS's earlier name for other_trials, is taken
/// too (one of the two). Values of the first worker that wrote the step. The
/// other run's step is waited for; when it has no such step the step is
/// skipped (StepUnavailable). A tensor the other run does not have at that
/// step is not compared; a step where nothing can be compared is skipped
/// (TensorUnavailableForStep). Parallel steps.
/// What a step reads (the values here and in the other run) is declared
/// (required_tensors) and fetched up front, once the other run has reached the step.

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

/// SimilarAcrossRuns (see the file comment).
class similar_across_runs : public detail::any_tensor_rule<similar_across_runs> {
public:
    static constexpr std::string_view rule_name = "SimilarAcrossRuns";
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule comparing `base` with `others[0]` (or, when none is given,
    /// with the run at the `other_trials` parameter's location).
    TDBG_DECL similar_across_runs(trial base, std::vector<trial> others, const rule_params& params = rule_params());

    /// What any_tensor_rule reads at `step`, once the other run has reached `step`.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// The value of `t` at `step`, here and (where it has the tensor) in the other run.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> tensor_requests(const tdbg::tensor& t, std::int64_t step) const;
    /// Met when the tensor of `tensor_inputs` differs between the runs at `step`.
    [[nodiscard]] TDBG_DECL std::optional<verdict>
    check_tensor(const step_inputs& inputs, detail::input_range tensor_inputs, std::int64_t step) const;

private:
    // `others`, or when empty the run at the `other_trials` (or `other_trial`) parameter.
    [[nodiscard]] TDBG_DECL static std::vector<trial> with_other(std::vector<trial> others, const rule_params& params);
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/similar_across_runs.ipp"
#else
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(extern template, similar_across_runs)
#endif
