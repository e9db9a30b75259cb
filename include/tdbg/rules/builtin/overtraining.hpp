#pragma once
/// \file
/// Overtraining: met when training goes on although a loss stopped improving:
/// the training loss for `patience_train` TRAIN steps, or the validation loss
/// for `patience_validation` EVAL steps.
///
/// Parameters (AWS's published defaults): `patience_train` (int, 5),
/// `patience_validation` (int, 10), `delta` (float, 0.1). Interpretation:
/// losses are the "losses" collection's single-element values. Per loss and
/// mode (TRAIN, EVAL), the best value so far is kept; a value below
/// best - delta is a new optimum (the first value is one). Counting the saved
/// steps of that mode since the last optimum, the condition is met at a step
/// where the count reaches patience_train (TRAIN) or patience_validation
/// (EVAL), and at every later step of that mode until a new optimum. Steps of
/// other modes, or without a loss, evaluate to False. Keeps state: evaluated
/// sequentially.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// Overtraining over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_overtraining : public rule<basic_overtraining<Storage>, Storage> {
    using base = rule<basic_overtraining<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "Overtraining";

    /// The rule over `trial`, configured by `params`.
    explicit basic_overtraining(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), patience_train_(params.get<std::int64_t>("patience_train", 5)),
          patience_validation_(params.get<std::int64_t>("patience_validation", 10)), delta_(params.get("delta", 0.1)) {
        if (patience_train_ < 1 || patience_validation_ < 1) {
            throw config_error("rule Overtraining: 'patience_train' and 'patience_validation' must be at least 1");
        }
    }

    /// True when, at this TRAIN or EVAL step, a loss has gone too long without a new optimum.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) {
        const auto m = this->base_trial().mode_of(step);
        if (m != mode::train && m != mode::eval) {
            return false;
        }
        const std::int64_t patience = *m == mode::train ? patience_train_ : patience_validation_;
        bool met = false;
        for (const std::string& name : losses_.names(this->base_trial())) {
            std::optional<double> loss;
            try {
                const tensor_value v = this->value(name, step);
                if (v.size() == 1 && is_real_valued(v.type())) {
                    loss = scalar_of(v);
                }
            } catch (const tensor_unavailable_for_step&) {
            }
            if (!loss) {
                continue;
            }
            progress& p = state_[{name, *m}];
            if (!p.best || *loss < *p.best - delta_) {
                p.best = *loss;
                p.since = 0;
                continue;
            }
            ++p.since;
            if (p.since >= patience) {
                this->set_reason(name + " (" + std::string(mode_name(*m)) + ") has not improved on " +
                                 std::to_string(*p.best) + " for " + std::to_string(p.since) + " steps");
                met = true;
            }
        }
        return met;
    }

private:
    struct progress {
        std::optional<double> best;
        std::int64_t since = 0;
    };

    std::int64_t patience_train_;
    std::int64_t patience_validation_;
    double delta_;
    detail::tensor_selection<Storage> losses_{{"losses"}, {}, false};
    std::map<std::pair<std::string, mode>, progress> state_;
};

/// Overtraining over local runs.
using overtraining = basic_overtraining<>;

} // namespace tdbg::rules
