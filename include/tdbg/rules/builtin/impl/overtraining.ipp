#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/overtraining.hpp.

#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/builtin/overtraining.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL overtraining::overtraining(trial base, const rule_params& params)
    : selection_rule(std::move(base), params, detail::tensor_selection({"losses"}, {}, false)),
      patience_train_(params.get<std::int64_t>("patience_train", 5, at_least(1))),
      patience_validation_(params.get<std::int64_t>("patience_validation", 10, at_least(1))),
      delta_(params.get("delta", 0.01, non_negative)) {}

TDBG_DECL std::vector<tensor_request> overtraining::required_tensors(std::int64_t step) const {
    std::vector<tensor_request> out;
    const auto m = base_trial().mode_of(step);
    if (m != mode::train && m != mode::eval) {
        return out;
    }
    for (const std::string& tensor_name : selection().names(base_trial())) {
        out.push_back(value_request(tensor_name, step, true));
    }
    return out;
}

TDBG_DECL verdict overtraining::invoke_at_step(std::int64_t step, const step_inputs& inputs) {
    const auto m = base_trial().mode_of(step);
    if (m != mode::train && m != mode::eval) {
        return false;
    }
    const std::int64_t patience = *m == mode::train ? patience_train_ : patience_validation_;
    (*m == mode::train ? train_steps_ : eval_steps_) += 1;
    // Every loss is followed; the last one met gives the reason.
    verdict met = false;
    for (const step_inputs::input& in : inputs) {
        const std::string& tensor_name = in.request.name;
        std::optional<double> loss;
        const tensor_value* v = detail::value_if_saved(inputs, in);
        if (v != nullptr && v->size() == 1 && is_real_valued(v->type())) {
            loss = scalar_of(*v);
        }
        if (!loss) {
            continue;
        }
        progress& p = state_[{tensor_name, *m}];
        if (p.values++ >= patience) {
            (*m == mode::train ? past_train_ : past_eval_) += 1; // a value that can meet the condition
        }
        if (!p.best || *loss < *p.best - delta_) {
            p.best = *loss;
            p.since = 0;
            continue;
        }
        ++p.since;
        if (p.since >= patience) {
            met = condition_met(fmt::format("{} ({}) has not improved on {:.6g} for {} steps", tensor_name,
                                            mode_name(*m), *p.best, p.since));
        }
    }
    return met;
}

TDBG_DECL comparison_coverage overtraining::comparisons() const {
    const auto plural = [](std::uint64_t n) { return n == 1 ? "" : "s"; };
    return {past_train_ + past_eval_,
            fmt::format("{} TRAIN step{}, {} past patience_train {}; {} EVAL step{}, {} past patience_validation {}",
                        train_steps_, plural(train_steps_), past_train_, patience_train_, eval_steps_,
                        plural(eval_steps_), past_eval_, patience_validation_)};
}

TDBG_DECL rule_description overtraining::describe() {
    return {"Training goes on although the loss stopped improving.",
            "Met when the training loss has not improved for patience_train TRAIN steps, or the validation loss "
            "for patience_validation EVAL steps: further training is wasted, or makes the model worse.\n\nLosses "
            "are the \"losses\" collection's single-element values. A value below the best so far minus delta is "
            "an improvement. Once a patience is reached the rule is met at every further step of that mode until "
            "the loss improves again.",
            {{"patience_train", "5", "the saved TRAIN steps without improvement allowed (at least 1)"},
             {"patience_validation", "10", "the saved EVAL steps without improvement allowed (at least 1)"},
             {"delta", "0.01", "the least decrease that counts as an improvement"}},
            step_dependence::carried_state};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_SELECTION_RULE_BASES(template, overtraining)
#endif
