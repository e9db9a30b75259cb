#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/unchanged_tensor.hpp.

#include <cstddef>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/builtin/unchanged_tensor.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL unchanged_tensor::unchanged_tensor(trial base, const rule_params& params)
    : rule(std::move(base), params), selection_(detail::selection_from(params, false)),
      num_steps_(params.get<std::int64_t>("num_steps", 3, at_least(2))), rtol_(params.get("rtol", 1e-05, non_negative)),
      atol_(params.get("atol", 1e-08, non_negative)), equal_nan_(params.get("equal_nan", false)) {
    if (selection_.unspecified()) {
        throw config_error("rule UnchangedTensor: give collection_names or tensor_regex (or both)");
    }
}

TDBG_DECL verdict unchanged_tensor::invoke_at_step(std::int64_t step) const {
    return detail::any_tensor(selection_.names(base_trial()), step, name(),
                              [&](const std::string& tensor_name) { return unchanged(tensor_name, step); });
}

TDBG_DECL std::optional<verdict> unchanged_tensor::unchanged(const std::string& tensor_name, std::int64_t step) const {
    const auto t = tensor(tensor_name);
    const std::vector<std::int64_t> prev = t.prev_steps(step, static_cast<std::size_t>(num_steps_));
    if (prev.empty() || prev.back() != step || prev.size() < static_cast<std::size_t>(num_steps_)) {
        return std::nullopt;
    }
    bool evaluated = false;
    for (const std::string& worker : t.workers(step)) {
        std::vector<tensor_value> values;
        try {
            for (std::int64_t s : prev) {
                values.push_back(value(tensor_name, s, mode::global, worker));
            }
        } catch (const tensor_unavailable_for_step&) {
            continue;
        } catch (const invalid_worker&) {
            continue; // this worker did not write one of the steps
        }
        evaluated = true;
        bool same = true;
        for (std::size_t i = 1; i < values.size() && same; ++i) {
            same = allclose(values[i], values[i - 1], rtol_, atol_, equal_nan_);
        }
        if (same) {
            return condition_met(
                fmt::format("{} ({}) unchanged over steps {}..{}", tensor_name, worker, prev.front(), step));
        }
    }
    if (!evaluated) {
        return std::nullopt;
    }
    return verdict(false);
}

} // namespace tdbg::rules
