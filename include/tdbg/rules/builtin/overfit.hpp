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
/// What a step reads is declared (required_tensors) and fetched up front.
/// What it compared (comparisons()): the EVAL steps it looked at, the ratios computed and, per
/// loss, the runs of `patience` ratios among them (what can meet the condition), "3 EVAL steps,
/// 3 ratios to a TRAIN mean (0 runs of patience 5)"; an evaluation without such a run is
/// NothingEvaluated.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/detail/selection_rule.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// Overfit (see the file comment).
class overfit : public detail::selection_rule<overfit> {
public:
    static constexpr std::string_view rule_name = "Overfit";
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit overfit(trial base, const rule_params& params = rule_params());

    /// The value of every selected loss at `step`, when it is a training or validation
    /// step from `start_step` on.
    [[nodiscard]] TDBG_DECL std::vector<tensor_request> required_tensors(std::int64_t step) const;
    /// Records the step's losses; met at an EVAL step once the ratio stayed above the threshold long enough.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step, const step_inputs& inputs);

    /// The EVAL steps it looked at, the ratios it computed and the runs of patience ratios among them.
    [[nodiscard]] TDBG_DECL comparison_coverage comparisons() const;

private:
    struct loss_state {
        std::optional<mode> last_mode;
        std::vector<double> train;
        std::vector<double> eval;
        std::int64_t exceeded = 0;
        std::int64_t ratios = 0; // the ratios computed
    };

    // The mean of `v` (not empty).
    [[nodiscard]] TDBG_DECL static double mean(const std::vector<double>& v);
    // Records the loss of `tensor_name` at `step` (of mode `m`); met when the ratio stayed above long enough.
    [[nodiscard]] TDBG_DECL verdict record(const std::string& tensor_name, mode m, double loss, std::int64_t step);

    std::int64_t start_step_;
    std::int64_t patience_;
    double ratio_threshold_;
    std::map<std::string, loss_state> state_;
    std::uint64_t eval_steps_ = 0; // the EVAL steps from start_step looked at
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/overfit.ipp"
#else
TDBG_DETAIL_SELECTION_RULE_BASES(extern template, overfit)
#endif
