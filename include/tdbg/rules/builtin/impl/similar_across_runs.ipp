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
    : rule(std::move(base), with_other(std::move(others), params), params),
      selection_(detail::selection_from(params, true)) {}

TDBG_DECL verdict similar_across_runs::invoke_at_step(std::int64_t step) const {
    const trial& other = other_trials().front();
    try {
        other.wait_for_steps({step});
    } catch (const no_more_data&) {
        throw step_unavailable(
            fmt::format("rule SimilarAcrossRuns: the other run {} ended before step {}", other.name(), step), {}, step,
            tdbg::mode::global);
    }
    return detail::any_tensor(
        selection_.names(base_trial()), step, name(), [&](const std::string& tensor_name) -> std::optional<verdict> {
            const tensor_value mine = value(tensor_name, step);
            if (!other.has_tensor(tensor_name)) {
                return std::nullopt;
            }
            const tensor_value theirs = other.tensor(tensor_name).value(step);
            if (!allclose(mine, theirs)) {
                return condition_met(fmt::format("{} differs from {}", tensor_name, other.name()));
            }
            return verdict(false);
        });
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

} // namespace tdbg::rules
