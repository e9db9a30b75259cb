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
    : rule(std::move(base), params), patience_train_(params.get<std::int64_t>("patience_train", 5, at_least(1))),
      patience_validation_(params.get<std::int64_t>("patience_validation", 10, at_least(1))),
      delta_(params.get("delta", 0.01, non_negative)) {}

TDBG_DECL verdict overtraining::invoke_at_step(std::int64_t step) {
    const auto m = base_trial().mode_of(step);
    if (m != mode::train && m != mode::eval) {
        return false;
    }
    const std::int64_t patience = *m == mode::train ? patience_train_ : patience_validation_;
    // Every loss is followed; the last one met gives the reason.
    verdict met = false;
    for (const std::string& tensor_name : losses_.names(base_trial())) {
        std::optional<double> loss;
        try {
            const tensor_value v = value(tensor_name, step);
            if (v.size() == 1 && is_real_valued(v.type())) {
                loss = scalar_of(v);
            }
        } catch (const tensor_unavailable_for_step&) {
        }
        if (!loss) {
            continue;
        }
        progress& p = state_[{tensor_name, *m}];
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

} // namespace tdbg::rules
