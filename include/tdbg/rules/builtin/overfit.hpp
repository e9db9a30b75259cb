#pragma once
/// \file
/// Overfit: met when the validation loss runs away from the training loss:
/// (mean validation loss - mean training loss) / mean training loss exceeds
/// `ratio_threshold` for `patience` evaluations in a row.
///
/// Parameters (AWS's published defaults): `tensor_regex` (list, None),
/// `start_step` (int, 0), `patience` (int, 1), `ratio_threshold` (float, 0.1).
/// Interpretation: losses are the "losses" collection plus the tensors
/// matching tensor_regex, single-element values only, from global step
/// start_step on. Training losses are TRAIN-mode values, validation losses
/// EVAL-mode values. A run alternates phases: the training mean is that of the
/// latest TRAIN phase, the validation mean that of the current EVAL phase so
/// far. At each EVAL step with a loss the ratio is computed; `patience`
/// consecutive ratios above the threshold meet the condition (every further
/// such step meets it too; a ratio at or below resets the count). Steps of
/// other modes, and steps before a first TRAIN phase, evaluate to False. Keeps
/// state: evaluated sequentially.

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// Overfit over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_overfit : public rule<basic_overfit<Storage>, Storage> {
    using base = rule<basic_overfit<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "Overfit";

    /// The rule over `trial`, configured by `params`.
    explicit basic_overfit(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params),
          selection_({"losses"}, params.get_optional<std::vector<std::string>>("tensor_regex").value_or(
                                     std::vector<std::string>{}),
                     false),
          start_step_(params.get<std::int64_t>("start_step", 0)), patience_(params.get<std::int64_t>("patience", 1)),
          ratio_threshold_(params.get("ratio_threshold", 0.1)) {
        if (patience_ < 1) {
            throw config_error("rule Overfit: parameter 'patience' must be at least 1, got " + std::to_string(patience_));
        }
    }

    /// Records the step's losses; true at an EVAL step once the ratio stayed above the threshold long enough.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) {
        if (step < start_step_) {
            return false;
        }
        const auto m = this->base_trial().mode_of(step);
        if (m != mode::train && m != mode::eval) {
            return false;
        }
        bool met = false;
        for (const std::string& name : selection_.names(this->base_trial())) {
            std::optional<double> loss;
            try {
                const tensor_value v = this->value(name, step);
                if (v.size() == 1 && is_real_valued(v.type())) {
                    loss = scalar_of(v);
                }
            } catch (const tensor_unavailable_for_step&) {
            }
            if (loss) {
                met = record(name, *m, *loss, step) || met;
            }
        }
        return met;
    }

private:
    struct loss_state {
        std::optional<mode> last_mode;
        std::vector<double> train;
        std::vector<double> eval;
        std::int64_t exceeded = 0;
    };

    static double mean(const std::vector<double>& v) {
        double sum = 0;
        for (double x : v) {
            sum += x;
        }
        return sum / static_cast<double>(v.size());
    }

    bool record(const std::string& name, mode m, double loss, std::int64_t step) {
        loss_state& s = state_[name];
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
        s.exceeded = ratio > ratio_threshold_ ? s.exceeded + 1 : 0;
        if (s.exceeded >= patience_) {
            this->set_reason(name + ": validation mean " + std::to_string(eval_mean) + " vs training mean " +
                             std::to_string(train_mean) + " at step " + std::to_string(step));
            return true;
        }
        return false;
    }

    detail::tensor_selection<Storage> selection_;
    std::int64_t start_step_;
    std::int64_t patience_;
    double ratio_threshold_;
    std::map<std::string, loss_state> state_;
};

/// Overfit over local runs.
using overfit = basic_overfit<>;

} // namespace tdbg::rules
