#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/loss_not_decreasing.hpp.

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/builtin/loss_not_decreasing.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL loss_not_decreasing::loss_not_decreasing(trial base, const rule_params& params)
    : rule(std::move(base), params), selection_(detail::selection_from(params, false)),
      use_losses_collection_(params.get("use_losses_collection", true)),
      num_steps_(params.get<std::int64_t>("num_steps", 10, at_least(1))),
      diff_percent_(params.get("diff_percent", 0.1, non_negative)),
      increase_threshold_percent_(increase_threshold(params)),
      mode_(params.contains("mode") ? params.get_optional<mode>("mode")
                                    : std::optional<mode>(params.get("mode", mode::global))) {
    if (selection_.unspecified() && !use_losses_collection_) {
        throw config_error("rule LossNotDecreasing: give collection_names or tensor_regex, or use_losses_collection");
    }
}

TDBG_DECL verdict loss_not_decreasing::invoke_at_step(std::int64_t step) {
    const std::vector<std::string> names = losses();
    if (!mode_) {
        mode_ = pick_mode(names);
        if (!mode_) {
            return false; // no selected tensor has steps yet
        }
    }
    const mode m = *mode_;
    std::int64_t s = step;
    if (m != mode::global) {
        if (base_trial().mode_of(step) != m) {
            return false;
        }
        s = base_trial().mode_step(step).value_or(step);
    }
    ++mode_steps_;
    // Every loss is checked (each check moves its last check); the last one met gives the reason.
    verdict met = false;
    for (const std::string& tensor_name : names) {
        verdict outcome = check(tensor_name, s, m);
        if (outcome) {
            met = std::move(outcome);
        }
    }
    return met;
}

TDBG_DECL std::vector<std::string> loss_not_decreasing::losses() const {
    std::vector<std::string> names = selection_.names(base_trial());
    if (use_losses_collection_ && base_trial().collections().count("losses") != 0) {
        for (auto& n : losses_.names(base_trial())) {
            names.push_back(std::move(n));
        }
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
    }
    return names;
}

TDBG_DECL std::optional<mode> loss_not_decreasing::pick_mode(const std::vector<std::string>& names) const {
    for (mode m : {mode::eval, mode::train, mode::global}) {
        for (const std::string& tensor_name : names) {
            if (!tensor(tensor_name).steps(m).empty()) {
                return m;
            }
        }
    }
    return std::nullopt;
}

TDBG_DECL verdict loss_not_decreasing::check(const std::string& tensor_name, std::int64_t s, mode m) {
    const auto t = tensor(tensor_name);
    const std::vector<std::int64_t> steps = t.steps(m);
    if (!std::binary_search(steps.begin(), steps.end(), s)) {
        return false;
    }
    auto last = last_check_.find(tensor_name);
    if (last != last_check_.end() && s < last->second + num_steps_) {
        return false;
    }
    auto after = std::upper_bound(steps.begin(), steps.end(), s - num_steps_);
    if (after == steps.begin()) {
        return false;
    }
    const std::int64_t b = *(after - 1);
    const tensor_value now = value(tensor_name, s, m);
    const tensor_value before = value(tensor_name, b, m);
    if (now.size() != 1 || before.size() != 1 || !is_real_valued(now.type()) || !is_real_valued(before.type())) {
        return false; // not a scalar loss
    }
    last_check_[tensor_name] = s;
    ++checks_;
    if (m == mode::global) {
        for (const std::int64_t g : {b, s}) {
            if (const auto step_mode = base_trial().mode_of(g)) {
                compared_modes_[tensor_name].insert(*step_mode);
            }
        }
    }
    // The steps are the mode's own ("EVAL step 3"), or global steps when the rule reads GLOBAL.
    const std::string at = m == mode::global ? std::string("global step") : fmt::format("{} step", mode_name(m));
    const double loss_s = scalar_of(now);
    const double loss_b = scalar_of(before);
    if (std::isnan(loss_s) || std::isnan(loss_b)) {
        // A NaN loss is not a lower loss: the condition is met (the lowest is kept as it was).
        return condition_met(fmt::format("{} went from {:.6g} at {} {} to {:.6g} at {} {}: a NaN loss is not decreasing",
                                         tensor_name, loss_b, at, b, loss_s, at, s));
    }
    auto lowest = lowest_.find(tensor_name);
    if (lowest == lowest_.end()) {
        lowest = lowest_.emplace(tensor_name, loss_b).first;
    }
    const double lowest_before = std::min(lowest->second, loss_b);
    lowest->second = std::min(lowest_before, loss_s);
    if (loss_s >= loss_b - std::fabs(loss_b) * diff_percent_ / 100.0) {
        return condition_met(
            fmt::format("{} went from {:.6g} at {} {} to {:.6g} at {} {}", tensor_name, loss_b, at, b, loss_s, at, s));
    }
    if (increase_threshold_percent_ &&
        loss_s > lowest_before + std::fabs(lowest_before) * *increase_threshold_percent_ / 100.0) {
        return condition_met(fmt::format("{} is {:.6g} at {} {}, more than {:g}% above its lowest {:.6g}", tensor_name,
                                         loss_s, at, s, *increase_threshold_percent_, lowest_before));
    }
    return false;
}

TDBG_DECL comparison_coverage loss_not_decreasing::comparisons() const {
    comparison_coverage out;
    out.compared = checks_;
    out.text = fmt::format("{} {} step{}, {} window{} of {}", mode_steps_,
                           mode_ ? std::string(mode_name(*mode_)) : std::string("loss"), mode_steps_ == 1 ? "" : "s",
                           checks_, checks_ == 1 ? "" : "s", num_steps_);
    for (const auto& [tensor_name, modes] : compared_modes_) {
        if (modes.size() < 2) {
            continue;
        }
        std::string names;
        for (const mode m : modes) {
            names.append(names.empty() ? "" : " and ").append(mode_name(m));
        }
        // smdebug's GLOBAL reading: a per-batch TRAIN loss against an EVAL loss of the same name.
        out.text += fmt::format("; its GLOBAL series of '{}' mixes {} steps (mode=TRAIN or mode=EVAL compares one)",
                                tensor_name, names);
    }
    return out;
}

TDBG_DECL std::optional<double> loss_not_decreasing::increase_threshold(const rule_params& params) {
    if (params.contains("increase_threshold_percent")) {
        return params.get_optional<double>("increase_threshold_percent", non_negative);
    }
    return params.get("increase_threshold_percent", 5.0, non_negative);
}

TDBG_DECL rule_description loss_not_decreasing::describe() {
    return {"The loss stopped going down.",
            "Met when a loss has not gone down by at least diff_percent percent over num_steps steps, or has risen "
            "more than increase_threshold_percent percent above the lowest value the rule compared.\n\nThe losses "
            "are the tensors of collection_names and tensor_regex and, with use_losses_collection, of the "
            "\"losses\" collection; only single-element values count. The rule counts steps in mode's step "
            "numbers; with mode None it takes the first of EVAL, TRAIN and GLOBAL in which a loss was saved. Each "
            "loss is checked every num_steps steps against its latest value saved at least num_steps steps "
            "earlier. A NaN loss is a loss that does not decrease.",
            {{"collection_names", "None", "collections of losses to check (comma-separated)"},
             {"tensor_regex", "None", "regular expressions of the names of losses to check (comma-separated)"},
             {"use_losses_collection", "True", "also check the \"losses\" collection"},
             {"num_steps", "10", "the steps between two checks of a loss (at least 1)"},
             {"diff_percent", "0.1", "the least decrease, in percent, expected over num_steps steps"},
             {"increase_threshold_percent", "5",
              "the most a loss may rise above its lowest, in percent (None: not checked)"},
             {"mode", "GLOBAL", "whose steps count: TRAIN, EVAL, PREDICT, GLOBAL (None: chosen from the run)"}},
            step_dependence::carried_state, worker_reads::first_worker};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_RULE_BASES(template, loss_not_decreasing)
#endif
