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
    : selection_rule(std::move(base), params, detail::tensor_selection({"weights"}, {}, false)),
      num_steps_(params.get_optional<std::int64_t>("num_steps", at_least(1))),
      large_threshold_(params.get("large_threshold", 10.0, non_negative)),
      small_threshold_(params.get("small_threshold", 1e-08, non_negative)),
      epsilon_(params.get("epsilon", 1e-09, positive)) {}

TDBG_DECL std::optional<std::pair<mode, std::int64_t>>
weight_update_ratio::mode_step(const std::vector<std::string>& names, std::int64_t step) const {
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
            return std::nullopt;
        }
        s = base_trial().mode_step(step).value_or(step);
    }
    return std::make_pair(m, s);
}

TDBG_DECL std::vector<tensor_request> weight_update_ratio::required_tensors(std::int64_t step) const {
    const std::vector<std::string> names = selection().names(base_trial());
    const auto at = mode_step(names, step);
    std::vector<tensor_request> out;
    if (!at) {
        return out;
    }
    const auto [m, s] = *at;
    for (const std::string& tensor_name : names) {
        const auto t = tensor(tensor_name);
        const std::optional<std::int64_t> p = compared_step(t, s, m);
        if (!p) {
            continue; // not evaluated
        }
        for (const std::string& worker : detail::workers_at(t, s, m)) {
            for (const std::int64_t which : {s, *p}) { // now, then before
                tensor_request r = value_request(tensor_name, which, true);
                r.step_mode = m;
                r.worker = worker;
                out.push_back(std::move(r));
            }
        }
    }
    return out;
}

TDBG_DECL verdict weight_update_ratio::invoke_at_step(std::int64_t step, const step_inputs& inputs) const {
    if (!mode_step(selection().names(base_trial()), step)) {
        return false; // not a step of the mode the weights are compared in
    }
    mode_steps_.add();
    const std::vector<detail::input_range> tensors = detail::tensor_groups(inputs);
    return detail::any_tensor_index(tensors.size(), step, name(),
                                    [&](std::size_t i) { return out_of_bounds(inputs, tensors[i]); });
}

TDBG_DECL std::optional<std::int64_t> weight_update_ratio::compared_step(const tdbg::tensor& t, std::int64_t s,
                                                                         mode m) const {
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
    return p;
}

TDBG_DECL std::optional<verdict> weight_update_ratio::out_of_bounds(const step_inputs& inputs,
                                                                    detail::input_range tensor_inputs) const {
    // Two inputs per worker: the value now, then the one it is compared with.
    bool evaluated = false;
    for (std::size_t k = tensor_inputs.first; k + 2 <= tensor_inputs.last; k += 2) {
        const tensor_value* now = nullptr;
        const tensor_value* before = nullptr;
        try {
            now = &detail::value_of(inputs, inputs[k]);
            before = &detail::value_of(inputs, inputs[k + 1]);
        } catch (const tensor_unavailable_for_step&) {
            continue;
        } catch (const invalid_worker&) {
            continue;
        }
        if (!is_real_valued(now->type()) || now->size() != before->size()) {
            continue;
        }
        evaluated = true;
        pairs_.add();
        const double ratio = l2_distance(*now, *before) / (l2_norm(*before) + epsilon_);
        if (ratio > large_threshold_ || ratio < small_threshold_) {
            return condition_met(fmt::format("update ratio of {} ({}) = {:.6g} {} {:g}", inputs[k].request.name,
                                             *inputs[k].request.worker, ratio, ratio > large_threshold_ ? ">" : "<",
                                             ratio > large_threshold_ ? large_threshold_ : small_threshold_));
        }
    }
    if (!evaluated) {
        return std::nullopt;
    }
    return verdict(false);
}

TDBG_DECL comparison_coverage weight_update_ratio::comparisons() const {
    const std::vector<std::string> names = selection().names(base_trial());
    const bool train = std::any_of(names.begin(), names.end(),
                                   [&](const std::string& n) { return !tensor(n).steps(mode::train).empty(); });
    const std::uint64_t steps = mode_steps_.get();
    const std::uint64_t pairs = pairs_.get();
    return {pairs, fmt::format("{} {} step{}, {} pair{} of steps", steps, train ? "TRAIN" : "GLOBAL",
                               steps == 1 ? "" : "s", pairs, pairs == 1 ? "" : "s")};
}

TDBG_DECL rule_description weight_update_ratio::describe() {
    return {"Weight updates are too large or too small for the weights.",
            "Met at a step when, for some tensor of the \"weights\" collection, the size of the update relative to "
            "the weight, ||w(s) - w(p)|| / (||w(p)|| + epsilon), is above large_threshold (the updates are too "
            "large: training may diverge) or below small_threshold (too small: training has stalled).\n\nThe "
            "previous step p is the newest saved step before s or, with num_steps, the oldest saved step within "
            "num_steps steps before s. Steps are counted in TRAIN mode when weights were saved in it, else in "
            "global steps. Norms are Euclidean over all elements; each worker is compared with itself.",
            {{"num_steps", "None", "how far back the previous step may lie (None: the newest saved step before)"},
             {"large_threshold", "10", "the largest ratio allowed"},
             {"small_threshold", "1e-08", "the smallest ratio allowed"},
             {"epsilon", "1e-09", "added to the weight's norm, so that a zero weight divides safely (more than 0)"}},
            step_dependence::earlier_steps};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_SELECTION_RULE_BASES(template, weight_update_ratio)
#endif
