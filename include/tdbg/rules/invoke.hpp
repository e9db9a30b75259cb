#pragma once
/// \file
/// `invoke_rule`: evaluates a rule step after step, with smdebug's semantics.
///
/// From `start_step` (smdebug: 0; here, when not given, the trial's first
/// step) up to `end_step` (exclusive; none: until the run ends), each global
/// step is first waited for in the base trial (a live run is looked at every
/// poll_interval until the step is there). The loop is a rule_evaluation (below),
/// which the watcher and `tdbg rules --follow` advance with waits of their own. Steps are visited as the run has them:
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
#include <utility>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/trial/options.hpp"

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
    /// How often invoke_rule looks at a live run for the step it waits for.
    std::chrono::milliseconds poll_interval{default_poll_interval};
    /// Called after each step, in step order, from the calling thread; steps
    /// never saved between two saved ones are skipped together and reported
    /// once, by the last of them.
    std::function<void(std::int64_t step, step_outcome outcome)> on_step;
    /// Asked between two steps and while waiting; once true the evaluation ends
    /// `interrupted` (the actions of a step where the condition was met run first).
    std::function<bool()> stop_requested;
    /// A snapshot of a live run: the steps written when the evaluation starts, never waited for.
    /// A step not there when it is reached is skipped (StepNotYetAvailable), and without
    /// end_step the evaluation ends after the last step the base trial knows then, unless the
    /// run has ended. What `tdbg rules` does without --follow, and `tdbg report`.
    bool snapshot = false;
    /// A rule's error (any exception but rule_evaluation_condition_met) ends the evaluation
    /// with status Error: the result's `error` says what, and what was found before it is kept.
    /// An error that comes once stop_requested says true (a read the stop cut short) ends it
    /// `interrupted` instead. False: errors propagate, as from smdebug's invoke_rule.
    bool record_errors = false;
};

/// Where a rule_evaluation stands after advance().
enum class evaluation_state {
    running, ///< the deadline came first: there is more to evaluate now
    waiting, ///< the next step is not written yet (a live run): call advance() again later
    done     ///< the evaluation ended: result() is final
};

/// What one call of rule_evaluation::advance() did.
struct advance_result {
    evaluation_state state = evaluation_state::running;
    /// True when steps were recorded (or the evaluation ended) in this call.
    bool progressed = false;
    /// With `waiting`: the step waited for (none: the run's first step).
    std::optional<std::int64_t> waiting_for;
};

namespace detail {
struct pending_outcome; // one step's outcome before it is folded into the result (impl/invoke.ipp)
} // namespace detail

/// One rule's evaluation over a run, resumable: invoke_rule's loop as an object
/// that is advanced, never blocking on the run. advance() evaluates the steps the
/// run has, in order, and returns when the next one is not written yet (`waiting`),
/// when its deadline passes (`running`), or at the end (`done`); the caller decides
/// how to wait (a sleep, a signal, a condition) and for how long. invoke_rule, the
/// watcher and `tdbg rules --follow` are such callers. Not thread-safe: one caller
/// at a time (the rule's parallel steps use threads of their own inside advance()).
class rule_evaluation {
public:
    using clock = std::chrono::steady_clock;

    /// Evaluates `r` (which must outlive the evaluation) as `options` says; nothing
    /// runs before the first advance(). step_timeout and skip_late_steps are the
    /// caller's to apply (invoke_rule does), through skip_waited_step().
    TDBG_DECL rule_evaluation(rule_base& r, invoke_options options);

    /// Evaluates until `deadline` (checked between batches of steps), until the next
    /// step is not written yet, or until the end. Rule errors propagate (the evaluation
    /// is then done, and result() keeps what was found before), and so does
    /// rule_evaluation_condition_met with raise_eval_cond.
    TDBG_DECL advance_result advance(clock::time_point deadline = clock::time_point::max());

    /// Advances to the end, as invoke_rule: sleeps poll_interval between looks at a
    /// live run, and applies step_timeout (throwing step_not_yet_available, or with
    /// skip_late_steps giving the step up). What advance() throws propagates.
    TDBG_DECL void run();

    /// While waiting for a step: asks the rule whether it fires without it (its
    /// `while_waiting`, see rule.hpp); if so records the trigger at that step and
    /// runs the rule's actions, once per step waited for. True when it fired now.
    TDBG_DECL bool check_while_waiting();

    /// While waiting: gives up the step waited for. A step is recorded as skipped
    /// (StepNotYetAvailable) and the evaluation goes on after it; the run's first
    /// step ends the evaluation (no_more_data), as invoke_rule with skip_late_steps.
    TDBG_DECL void skip_waited_step();

    /// Ends the evaluation now, `interrupted` (status Stopped unless it found issues).
    TDBG_DECL void interrupt();

    [[nodiscard]] bool done() const noexcept { return done_; }
    /// The rule evaluated.
    [[nodiscard]] rule_base& rule() const noexcept { return *rule_; }
    /// The step waited for (meaningful while waiting; none: the run's first step).
    [[nodiscard]] const std::optional<std::int64_t>& waiting_for() const noexcept { return waiting_for_; }
    /// What was found so far (final once done()).
    [[nodiscard]] const evaluation_result& result() const noexcept { return result_; }
    [[nodiscard]] evaluation_result take_result() noexcept { return std::move(result_); }

private:
    TDBG_DECL bool start();
    TDBG_DECL advance_result advance_steps(clock::time_point deadline);
    TDBG_DECL void run_steps();
    // record_errors: the error that ended the evaluation, recorded.
    TDBG_DECL advance_result ended_by_error(const std::exception& e);
    TDBG_DECL bool collect_batch(std::vector<detail::pending_outcome>& batch) const;
    TDBG_DECL void evaluate_batch(std::vector<detail::pending_outcome>& batch);
    TDBG_DECL void fold(detail::pending_outcome& o);
    TDBG_DECL void record(std::int64_t step, step_outcome outcome);
    // With status NothingEvaluated: sets the result's nothing_evaluated_reason.
    TDBG_DECL void explain_if_nothing_evaluated();
    [[nodiscard]] bool stop_requested() const { return options_.stop_requested && options_.stop_requested(); }
    [[nodiscard]] bool past_end(std::int64_t step) const { return options_.end_step && step >= *options_.end_step; }

    rule_base* rule_;
    invoke_options options_;
    evaluation_result result_;
    std::size_t threads_ = 1;
    std::size_t batch_limit_ = 1;
    bool params_checked_ = false;
    bool started_ = false;
    bool done_ = false;
    std::int64_t step_ = 0;
    std::optional<std::int64_t> waiting_for_;
};

/// Evaluates `r` as configured by `options` (see the file comment): a rule_evaluation
/// advanced to its end, waiting `poll_interval` between looks at a live run.
TDBG_DECL evaluation_result invoke_rule(rule_base& r, const invoke_options& options);

/// smdebug's `invoke_rule(rule, start_step=0, end_step=None, raise_eval_cond=False)`.
TDBG_DECL evaluation_result invoke_rule(rule_base& r, std::optional<std::int64_t> start_step = 0,
                                        std::optional<std::int64_t> end_step = std::nullopt, bool raise_eval_cond = false);

} // namespace tdbg::rules

#if TDBG_HEADER_ONLY
#include "tdbg/rules/impl/invoke.ipp"
#endif
