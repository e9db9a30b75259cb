#pragma once
/// \file
/// StalledTrainingRule: met at a step when more than `threshold` seconds
/// passed between it and the previous step: training stalled in between.
///
/// Parameters (AWS's published defaults): `threshold` (int seconds, 1800),
/// `stop_training_on_fire` (bool, False), `training_job_name_prefix` (string,
/// None). Interpretation: a step's time is the wall time of its event file
/// (the time stamp of the file's first record, written when the hook started
/// the step), read through the run's storage (trial::wall_time), so the rule
/// judges a finished run as it would have judged it live. A step without an
/// event file (only shapes were saved) evaluates to False and does not move
/// the clock. With stop_training_on_fire the stop-training action is added
/// (the stop marker is written; training_job_name_prefix, which names a
/// SageMaker job, is not needed). Keeps state: evaluated sequentially.
/// A job that stops writing for good: while the next step of a live run is
/// waited for (`tdbg rules --follow`, the watcher), the rule also watches the
/// clock, and fires at that step once more than `threshold` seconds of wall-clock
/// time have passed since the last step's time (`while_waiting`), as SageMaker's
/// rule container does; the stop-training action then runs too.
/// It reads no tensor (the wall time of the step's event file): nothing to
/// declare (required_tensors).
/// What it compared (comparisons()): the steps with a time and the pairs of consecutive ones,
/// "1 step with a time, 0 pairs of steps"; an evaluation without a pair is NothingEvaluated
/// (unless it fired while waiting).

#include <cstdint>
#include <optional>
#include <string_view>

#include "tdbg/config.hpp"
#include "tdbg/rules/description.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// StalledTrainingRule (see the file comment).
class stalled_training_rule : public rule<stalled_training_rule> {
public:
    static constexpr std::string_view rule_name = "StalledTrainingRule";
    /// What it checks, and its parameters with their defaults (`tdbg rules --describe`).
    [[nodiscard]] static TDBG_DECL rule_description describe();

    /// The rule over `base`, configured by `params`.
    TDBG_DECL explicit stalled_training_rule(trial base, const rule_params& params = rule_params());

    /// Met when `step` came more than `threshold` seconds after the previous one.
    [[nodiscard]] TDBG_DECL verdict invoke_at_step(std::int64_t step);
    /// The steps with a time it looked at and the pairs of steps it compared.
    [[nodiscard]] TDBG_DECL comparison_coverage comparisons() const;
    /// Met while `next_step` is waited for, once more than `threshold` seconds passed since the last step's time.
    [[nodiscard]] TDBG_DECL verdict while_waiting(std::int64_t next_step);

private:
    std::int64_t threshold_;
    std::optional<double> last_time_;
    std::uint64_t timed_steps_ = 0; // steps with a time
    std::uint64_t pairs_ = 0;       // pairs of steps whose times were compared
};

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/builtin/impl/stalled_training_rule.ipp"
#else
TDBG_DETAIL_RULE_BASES(extern template, stalled_training_rule)
#endif
