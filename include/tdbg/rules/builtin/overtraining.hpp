#pragma once
/// \file
/// Overtraining: met when training goes on although a loss stopped improving:
/// the training loss for `patience_train` TRAIN steps, or the validation loss
/// for `patience_validation` EVAL steps.
///
/// Parameters (AWS's published defaults): `patience_train` (int, 5),
/// `patience_validation` (int, 10), `delta` (float, 0.01; AWS's page said 0.1
/// until November 2020). Interpretation: losses are the "losses" collection's
/// single-element values. Per loss and mode (TRAIN, EVAL), the best value so
/// far is kept; a value below best - delta is a new optimum (the first value
/// is one). Counting the saved steps of that mode since the last optimum, the
/// condition is met at a step where the count reaches patience_train (TRAIN)
/// or patience_validation (EVAL), and at every later step of that mode until a
/// new optimum. Steps of other modes, or without a loss, evaluate to False.
/// Keeps state: evaluated sequentially.
/// What a step reads is declared (required_tensors) and fetched up front.
/// What it compared (comparisons()): per mode, the steps it looked at and the losses past its
/// patience (a value with at least `patience` values of its series before it: only such a value
/// can meet the condition), "12 TRAIN steps, 7 past patience_train 5; 3 EVAL steps, 0 past
/// patience_validation 10"; an evaluation with none in either mode is NothingEvaluated.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/selection_rule.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// Overtraining (see the file comment).
class overtraining : public detail::selection_rule<overtraining> {
public:
    static constexpr std::string_view rule_name = "Overtraining";
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit overtraining(trial base, const rule_params& params = rule_params());

    /// The value of every loss at `step`, when it is a training or validation step.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Met when, at this TRAIN or EVAL step, a loss has gone too long without a new optimum.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs);

    /// Per mode, the steps it looked at and the losses past its patience.
    [[nodiscard]] TDBG_DECL comparison_coverage comparisons() const;

private:
    struct progress {
        std::optional<double> best;
        std::int64_t since = 0;
        std::int64_t values = 0; // the values of the series so far
    };

    std::int64_t patience_train_;
    std::int64_t patience_validation_;
    double delta_;
    std::map<std::pair<std::string, mode>, progress> state_;
    std::uint64_t train_steps_ = 0; // the TRAIN steps looked at
    std::uint64_t eval_steps_ = 0; // the EVAL steps looked at
    std::uint64_t past_train_ = 0; // TRAIN losses with at least patience_train values before them
    std::uint64_t past_eval_ = 0; // EVAL losses with at least patience_validation values before them
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/overtraining.ipp"
#else
TDBG_DETAIL_SELECTION_RULE_BASES(extern template, overtraining)
#endif
