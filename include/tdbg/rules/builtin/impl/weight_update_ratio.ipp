#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/weight_update_ratio.hpp.

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/builtin/weight_update_ratio.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL weight_update_ratio::weight_update_ratio(trial base, const rule_params& params)
    : rule(std::move(base), params), num_steps_(params.get_optional<std::int64_t>("num_steps", at_least(1))),
      large_threshold_(params.get("large_threshold", 10.0, non_negative)),
      small_threshold_(params.get("small_threshold", 1e-08, non_negative)),
      epsilon_(params.get("epsilon", 1e-09, positive)) {}

TDBG_DECL verdict weight_update_ratio::invoke_at_step(std::int64_t step) const {
    const std::vector<std::string> names = weights_.names(base_trial());
    mode m = mode::global;
    for (const std::string& tensor_name : names) {
        if (!tensor(tensor_name).steps(mode::train).empty()) {
            m = mode::train;
            break;
        }
    }
    std::int64_t s = step;
    if (m != mode::global) {
        if (base_trial().mode_of(step) != m) {
            return false;
        }
        s = base_trial().mode_step(step).value_or(step);
    }
    return detail::any_tensor(names, step, name(),
                              [&](const std::string& tensor_name) { return out_of_bounds(tensor_name, s, m); });
}

TDBG_DECL std::optional<verdict> weight_update_ratio::out_of_bounds(const std::string& tensor_name, std::int64_t s,
                                                                    mode m) const {
    const auto t = tensor(tensor_name);
    const std::vector<std::int64_t> steps = t.steps(m);
    auto at = std::lower_bound(steps.begin(), steps.end(), s);
    if (at == steps.end() || *at != s || at == steps.begin()) {
        return std::nullopt;
    }
    std::int64_t p = *(at - 1);
    if (num_steps_) {
        auto oldest = std::lower_bound(steps.begin(), at, s - *num_steps_);
        if (oldest == at) {
            return std::nullopt;
        }
        p = *oldest;
    }
    bool evaluated = false;
    for (const std::string& worker : t.workers(s, m)) {
        tensor_value now;
        tensor_value before;
        try {
            now = value(tensor_name, s, m, worker);
            before = value(tensor_name, p, m, worker);
        } catch (const tensor_unavailable_for_step&) {
            continue;
        } catch (const invalid_worker&) {
            continue;
        }
        if (!is_real_valued(now.type()) || now.size() != before.size()) {
            continue;
        }
        evaluated = true;
        const double ratio = l2_distance(now, before) / (l2_norm(before) + epsilon_);
        if (ratio > large_threshold_ || ratio < small_threshold_) {
            return condition_met(fmt::format("update ratio of {} ({}) = {:.6g}", tensor_name, worker, ratio));
        }
    }
    if (!evaluated) {
        return std::nullopt;
    }
    return verdict(false);
}

} // namespace tdbg::rules
