#pragma once
/// \file
/// `invoke_rule`: evaluates a rule step after step, with smdebug's semantics.
///
/// From `start_step` (smdebug: 0; here, when not given, the trial's first
/// step) up to `end_step` (exclusive; none: until the run ends), each global
/// step is first waited for in the base trial (wait_for_steps: a live run is
/// polled until the step is there). Steps are visited as the run has them:
/// the steps it never saved between two saved ones are recorded as one run
/// (StepUnavailable), never walked one by one, however far apart. Then, with refreshing paused as in smdebug,
/// the step's declared tensors are fetched and `invoke_at_step` runs.
///   - A step that was not saved (step_unavailable), or where the rule read a
///     tensor that has no value at that step (tensor_unavailable_for_step) or
///     a tensor never saved (tensor_unavailable), is skipped and recorded
///     under that exception's smdebug name.
///   - no_more_data (the run ended before the step) ends the evaluation.
///   - When the condition is met the rule's actions run; with
///     `raise_eval_cond` rule_evaluation_condition_met is thrown at that
///     first step, otherwise the step is recorded and evaluation goes on.
///   - Any other exception propagates (any_rule::evaluate turns it into an
///     Error status).
/// Rules declaring `parallel_steps` are evaluated at several available steps
/// at once; outcomes are folded in step order, so results, actions and the
/// raise happen exactly as in a sequential evaluation. Rules evaluated side by
/// side may share one trial.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "tdbg/config.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

/// What happened at one step, for progress reports.
enum class step_outcome { triggered, not_triggered, skipped };

/// How invoke_rule runs.
struct invoke_options {
    /// The first global step (none: the trial's first step, waited for if the run has none yet).
    std::optional<std::int64_t> start_step;
    /// One past the last global step (none: until the run ends).
    std::optional<std::int64_t> end_step;
    /// Throw rule_evaluation_condition_met at the first step where the condition is met.
    bool raise_eval_cond = false;
    /// How long to wait for each step of a live run (none: as long as it takes, as smdebug).
    /// When it passes, step_not_yet_available is thrown, or the step is skipped with skip_late_steps.
    std::optional<std::chrono::milliseconds> step_timeout;
    /// With step_timeout: record a step that is not there in time as skipped ("StepNotYetAvailable") and go on.
    bool skip_late_steps = false;
    /// Threads for parallel evaluation and prefetching (0: the hardware's, or as many requests
    /// as the base trial's storage keeps in flight when that is more, as S3's 16; 1: none).
    std::size_t threads = 0;
    /// How often to look for the first step of a run that has none yet.
    std::chrono::milliseconds poll_interval{500};
    /// Called after each step, in step order, from the calling thread; steps
    /// never saved between two saved ones are skipped together and reported
    /// once, by the last of them.
    std::function<void(std::int64_t step, step_outcome outcome)> on_step;
};

/// Evaluates `r` as configured by `options` (see the file comment).
TDBG_DECL evaluation_result invoke_rule(rule_base& r, const invoke_options& options);

/// smdebug's `invoke_rule(rule, start_step=0, end_step=None, raise_eval_cond=False)`.
TDBG_DECL evaluation_result invoke_rule(rule_base& r, std::optional<std::int64_t> start_step = 0,
                                        std::optional<std::int64_t> end_step = std::nullopt, bool raise_eval_cond = false);

namespace detail {

/// invoke_rule's loop, recording into `result` as it goes, so that a caller
/// catching an exception keeps what was found before it.
TDBG_DECL void run_rule(rule_base& r, const invoke_options& options, evaluation_result& result);

/// While a caller of run_rule waits for `next_step` of a live run: asks the rule
/// (its `while_waiting`, see rule.hpp) whether it fires without the step; if so,
/// records the trigger at `next_step` in `result` and runs the rule's actions, once
/// per step waited for. True when it fired now.
TDBG_DECL bool check_while_waiting(rule_base& r, std::int64_t next_step, evaluation_result& result);

} // namespace detail
} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/invoke.ipp"
#endif
