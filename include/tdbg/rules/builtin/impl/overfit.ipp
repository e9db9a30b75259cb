#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/overfit.hpp.

#include <cmath>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/builtin/overfit.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL overfit::overfit(trial base, const rule_params& params)
    : selection_rule(
          std::move(base), params,
          detail::tensor_selection(
              {"losses"},
              params.get_optional<std::vector<std::string>>("tensor_regex").value_or(std::vector<std::string>{}),
              false)),
      start_step_(params.get<std::int64_t>("start_step", 0, non_negative)),
      patience_(params.get<std::int64_t>("patience", 1, at_least(1))),
      ratio_threshold_(params.get("ratio_threshold", 0.1)) {}

TDBG_DECL std::vector<tensor_request> overfit::required_tensors(std::int64_t step) const {
    std::vector<tensor_request> out;
    if (step < start_step_) {
        return out;
    }
    const auto m = base_trial().mode_of(step);
    if (m != mode::train && m != mode::eval) {
        return out;
    }
    for (const std::string& tensor_name : selection().names(base_trial())) {
        out.push_back(value_request(tensor_name, step, true));
    }
    return out;
}

TDBG_DECL verdict overfit::invoke_at_step(std::int64_t step, const step_inputs& inputs) {
    if (step < start_step_) {
        return false;
    }
    const auto m = base_trial().mode_of(step);
    if (m != mode::train && m != mode::eval) {
        return false;
    }
    eval_steps_ += *m == mode::eval ? 1 : 0;
    // Every loss is recorded; the last one met gives the reason.
    verdict met = false;
    for (const step_inputs::input& in : inputs) {
        std::optional<double> loss;
        const tensor_value* v = detail::value_if_saved(inputs, in);
        if (v != nullptr && v->size() == 1 && is_real_valued(v->type())) {
            loss = scalar_of(*v);
        }
        if (loss) {
            verdict outcome = record(in.request.name, *m, *loss, step);
            if (outcome) {
                met = std::move(outcome);
            }
        }
    }
    return met;
}

TDBG_DECL double overfit::mean(const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) {
        sum += x;
    }
    return sum / static_cast<double>(v.size());
}

TDBG_DECL verdict overfit::record(const std::string& tensor_name, mode m, double loss, std::int64_t step) {
    loss_state& s = state_[tensor_name];
    const bool new_phase = s.last_mode != m;
    s.last_mode = m;
    if (m == mode::train) {
        if (new_phase) {
            s.train.clear();
        }
        s.train.push_back(loss);
        return false;
    }
    if (new_phase) {
        s.eval.clear();
    }
    s.eval.push_back(loss);
    if (s.train.empty()) {
        return false;
    }
    const double train_mean = mean(s.train);
    const double eval_mean = mean(s.eval);
    if (train_mean == 0.0) {
        return false;
    }
    const double ratio = (eval_mean - train_mean) / std::fabs(train_mean);
    ++s.ratios;
    s.exceeded = ratio > ratio_threshold_ ? s.exceeded + 1 : 0;
    if (s.exceeded >= patience_) {
        return condition_met(fmt::format("{}: validation mean {:.6g} vs training mean {:.6g} at step {}", tensor_name,
                                         eval_mean, train_mean, step));
    }
    return false;
}

TDBG_DECL comparison_coverage overfit::comparisons() const {
    std::uint64_t ratios = 0;
    std::uint64_t runs = 0; // per loss, the ratios that end a run of patience of them
    for (const auto& item : state_) {
        const loss_state& s = item.second;
        ratios += static_cast<std::uint64_t>(s.ratios);
        runs += s.ratios >= patience_ ? static_cast<std::uint64_t>(s.ratios - patience_ + 1) : 0;
    }
    return {runs, fmt::format("{} EVAL step{}, {} ratio{} to a TRAIN mean ({} run{} of patience {})", eval_steps_,
                              eval_steps_ == 1 ? "" : "s", ratios, ratios == 1 ? "" : "s", runs, runs == 1 ? "" : "s",
                              patience_)};
}

TDBG_DECL rule_description overfit::describe() {
    return {"The validation loss runs away from the training loss.",
            "Met when (mean validation loss - mean training loss) / mean training loss exceeds ratio_threshold at "
            "patience evaluation steps in a row: the model fits its training data ever better, and generalises no "
            "better.\n\nLosses are the \"losses\" collection and the tensors matching tensor_regex, single-element "
            "values, from global step start_step on. Training losses are TRAIN-mode values, validation losses "
            "EVAL-mode values: the training mean is that of the latest TRAIN phase, the validation mean that of "
            "the current EVAL phase so far.",
            {{"tensor_regex", "None", "regular expressions of the names of further losses"},
             {"start_step", "0", "the first global step looked at"},
             {"patience", "1", "how many ratios in a row must exceed the threshold (at least 1)"},
             {"ratio_threshold", "0.1", "the largest relative gap allowed between the two means"}},
            step_dependence::carried_state};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_SELECTION_RULE_BASES(template, overfit)
#endif
