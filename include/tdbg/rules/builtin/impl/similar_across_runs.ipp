#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/similar_across_runs.hpp.

#include <optional>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/builtin/similar_across_runs.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/trial/trial.hpp"

namespace tdbg::rules {

TDBG_DECL similar_across_runs::similar_across_runs(trial base, std::vector<trial> others, const rule_params& params)
    : any_tensor_rule(std::move(base), with_other(std::move(others), params), params,
                      detail::selection_from(params, true)) {}

TDBG_DECL std::vector<tensor_request> similar_across_runs::required_tensors(std::int64_t step) const {
    const trial& other = other_trials().front();
    try {
        other.wait_for_steps({step});
    } catch (const no_more_data&) {
        throw step_unavailable(
            fmt::format("rule SimilarAcrossRuns: the other run {} ended before step {}", other.name(), step), {}, step,
            tdbg::mode::global);
    }
    return any_tensor_rule::required_tensors(step);
}

TDBG_DECL std::vector<tensor_request> similar_across_runs::tensor_requests(const tdbg::tensor& t,
                                                                           std::int64_t step) const {
    std::vector<tensor_request> out{value_request(t.name(), step, true)};
    if (other_trials().front().has_tensor(t.name())) {
        tensor_request theirs = value_request(t.name(), step, true);
        theirs.trial_index = 1;
        out.push_back(std::move(theirs));
    }
    return out;
}

TDBG_DECL std::optional<verdict> similar_across_runs::check_tensor(const step_inputs& inputs,
                                                                   detail::input_range tensor_inputs,
                                                                   std::int64_t /*step*/) const {
    const step_inputs::input& in = inputs[tensor_inputs.first];
    const tensor_value& mine = detail::value_of(inputs, in);
    if (tensor_inputs.last - tensor_inputs.first < 2) {
        return std::nullopt; // the other run does not have it
    }
    const tensor_value& theirs = detail::value_of(inputs, inputs[tensor_inputs.first + 1]);
    if (!allclose(mine, theirs)) {
        return condition_met(fmt::format("{} differs from {}", in.request.name, other_trials().front().name()));
    }
    return verdict(false);
}

TDBG_DECL std::vector<trial> similar_across_runs::with_other(std::vector<trial> others, const rule_params& params) {
    // other_trials is AWS's name today; other_trial, its earlier one, stays in users' configurations.
    const bool older_name = params.contains("other_trial");
    if (older_name && params.contains("other_trials")) {
        throw config_error("rule SimilarAcrossRuns: give other_trials or other_trial (its older name), not both");
    }
    params.declare("other_trial");
    params.declare("other_trials");
    const std::string key = older_name ? "other_trial" : "other_trials";
    const auto path = params.get_optional<std::string>(key);
    if (!others.empty()) {
        return others;
    }
    if (!path) {
        throw config_error(
            fmt::format("rule SimilarAcrossRuns: parameter '{}' (the run to compare with) is required", key));
    }
    others.push_back(create_trial(*path));
    return others;
}

TDBG_DECL rule_description similar_across_runs::describe() {
    rule_description out{
        "Two runs that should be alike have diverged.",
        "Compares this run with another one: met at a step where a selected tensor differs between the two "
        "(numpy.allclose with its default tolerances fails), as when two runs of the same seed and code should "
        "produce the same values.\n\nThe other run is other_trials (a run's path or URL, where SageMaker takes "
        "a training job's name) unless a program passes the other trial in. With neither collection_names nor "
        "tensor_regex every tensor is compared. The other run's step is waited for; a tensor it does not have "
        "is not compared.",
        {{"other_trials", "None", "the other run's path or URL (required unless the trial is passed in)"},
         {"other_trial", "None", "the earlier name of other_trials (give one of the two)"}},
        step_dependence::independent};
    for (parameter_description& p : detail::selection_parameters(false)) {
        out.parameters.push_back(std::move(p));
    }
    return out;
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_ANY_TENSOR_RULE_BASES(template, similar_across_runs)
#endif
