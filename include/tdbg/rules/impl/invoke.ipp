#pragma once
/// \file
/// Definitions of tdbg/rules/invoke.hpp. One file (about 640 lines) on purpose: rule_evaluation's
/// members are one state machine (start, batches of steps, folding in step order, waiting for a
/// live run, interruption) over the same private state and helpers; invoke_rule is its loop.

#include <algorithm>
#include <chrono>
#include <exception>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/detail/thread_pool.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/rules/invoke.hpp"
#include "tdbg/storage/storage.hpp"
#include "tdbg/trial/step_state.hpp"

namespace tdbg::rules {

namespace detail {

// One step's outcome before folding (for steps never saved, a whole run of them).
struct pending_outcome {
    std::int64_t step = 0;
    std::int64_t last = 0; // the run's last step, for skipped steps; step otherwise
    enum class kind { triggered, not_triggered, skipped, ended, failed } what = kind::not_triggered;
    std::string reason; // skip reason, or the trigger's reason
    bool end_of_rule = false; // triggered by rule_evaluation_condition_met(..., end_of_rule = true)
    bool unsaved = false;     // skipped: steps the run does not have at all
    std::exception_ptr error;
};

// What invoke_rule calls on a rule (its private interface).
class rule_runner {
public:
    static bool parallel_steps(const rule_base& r) noexcept { return r.do_parallel_steps(); }
    static verdict while_waiting(rule_base& r, std::int64_t next_step) { return r.do_while_waiting(next_step); }
    static std::string explain_selection(const rule_base& r) { return r.do_explain_selection(); }
    static std::string explain_reductions_only(const rule_base& r) { return r.do_explain_reductions_only(); }
    static std::optional<comparison_coverage> comparisons(const rule_base& r) { return r.do_comparisons(); }

    // Evaluates `r` at `step` (which has passed); never throws.
    static pending_outcome evaluate_step(rule_base& r, std::int64_t step, std::size_t fetch_threads) {
        pending_outcome out;
        out.step = step;
        out.last = step;
        try {
            const step_inputs inputs = fetch(r, r.do_required_tensors(step), step, fetch_threads);
            const verdict v = r.do_invoke_at_step(step, inputs);
            out.what = v.met() ? pending_outcome::kind::triggered : pending_outcome::kind::not_triggered;
            out.reason = v.reason();
        } catch (const rule_evaluation_condition_met& e) {
            // smdebug: a rule raises RuleEvaluationConditionMet itself, with end_of_rule
            // when it asks not to be evaluated again.
            out.what = pending_outcome::kind::triggered;
            out.end_of_rule = e.end_of_rule();
            out.reason = e.what();
        } catch (const tensor_unavailable_for_step&) {
            out.what = pending_outcome::kind::skipped;
            out.reason = std::string(skip_reason::tensor_unavailable_for_step);
        } catch (const step_unavailable&) {
            out.what = pending_outcome::kind::skipped;
            out.reason = std::string(skip_reason::step_unavailable);
        } catch (const tensor_unavailable&) {
            out.what = pending_outcome::kind::skipped;
            out.reason = std::string(skip_reason::tensor_unavailable);
        } catch (const no_more_data&) {
            out.what = pending_outcome::kind::ended;
        } catch (...) {
            out.what = pending_outcome::kind::failed;
            out.error = std::current_exception();
        }
        return out;
    }

private:
    // Reads what the rule declared for `step`, in parallel. A missing optional
    // input is nullopt, with the exception that says why; a missing required one
    // throws (the step is skipped).
    static step_inputs fetch(const rule_base& r, std::vector<tensor_request> requests, std::int64_t step,
                             std::size_t threads) {
        if (requests.empty()) {
            return {};
        }
        // Other steps a request names must have passed, as smdebug's fetch waits for them. A step
        // the trial has loaded already is not waited for: a wait lists a live run again.
        std::set<std::int64_t> others;
        for (const auto& q : requests) {
            if (q.trial_index == 0 && q.step_mode == mode::global && q.step != step && others.count(q.step) == 0 &&
                r.base_trial().has_passed_step(q.step) != step_state::available) {
                others.insert(q.step);
            }
        }
        if (!others.empty()) {
            r.base_trial().wait_for_steps(std::vector<std::int64_t>(others.begin(), others.end()));
        }
        std::vector<step_inputs::input> inputs(requests.size());
        std::vector<std::exception_ptr> errors(requests.size());
        tdbg::detail::parallel_for_each_index(requests.size(), threads, [&](std::size_t i) {
            inputs[i].request = std::move(requests[i]);
            try {
                inputs[i].value = r.read(inputs[i].request);
            } catch (const tensor_unavailable_for_step&) {
                if (!inputs[i].request.optional) {
                    throw;
                }
                errors[i] = std::current_exception();
            } catch (const tensor_unavailable&) {
                if (!inputs[i].request.optional) {
                    throw;
                }
                errors[i] = std::current_exception();
            } catch (const step_unavailable&) {
                if (!inputs[i].request.optional) {
                    throw;
                }
                errors[i] = std::current_exception();
            } catch (const invalid_worker&) {
                if (!inputs[i].request.optional) {
                    throw;
                }
                errors[i] = std::current_exception();
            } catch (const dtype_mismatch&) {
                if (!inputs[i].request.optional) {
                    throw; // e.g. a reduction of a string tensor
                }
                errors[i] = std::current_exception();
            }
        });
        return step_inputs(std::move(inputs), std::move(errors));
    }
};

// Pauses refreshing of the rule's trials while it lives.
inline std::vector<refresh_pause> pause_trials(const rule_base& r) {
    std::vector<refresh_pause> pauses;
    pauses.push_back(r.base_trial().pause_refresh());
    for (const auto& t : r.other_trials()) {
        pauses.push_back(t.pause_refresh());
    }
    return pauses;
}

// The last of the steps never saved that follow `step`, which the trial has just
// declared unavailable: every step before the next one it knows is unavailable too
// (trial::step_after), so they are recorded at once instead of walked one by one.
inline std::int64_t unsaved_through(const trial& t, std::int64_t step, const std::optional<std::int64_t>& end_step) {
    std::int64_t last = step;
    if (const auto next = t.step_after(step)) {
        last = *next - 1;
    }
    if (end_step && last >= *end_step) {
        last = *end_step - 1;
    }
    return std::max(last, step);
}

} // namespace detail

TDBG_DECL rule_evaluation::rule_evaluation(rule_base& r, invoke_options options)
    : rule_(&r), options_(std::move(options)) {
    result_.rule = r.name();
    result_.configuration_name = r.configuration_name();
    result_.params = r.params().items();
    result_.resolved_params = r.params().resolved();
}

// The first step, or false (and the state to return) when the evaluation cannot start yet.
TDBG_DECL bool rule_evaluation::start() {
    rule_base& r = *rule_;
    const trial& base = r.base_trial();
    if (!params_checked_) {
        params_checked_ = true;
        r.params().check_unknown();
        // Where a read costs a round trip (S3: the storage keeps many requests in flight), steps
        // and inputs are read with as many threads as the storage takes, unless told otherwise, so
        // that the event files of a batch's steps are read together rather than one after another.
        threads_ = options_.threads == 0
                       ? std::max(tdbg::detail::default_thread_count(0), base.storage().request_concurrency())
                       : options_.threads;
        batch_limit_ = detail::rule_runner::parallel_steps(r) && threads_ > 1 ? 64 : 1;
    }
    if (options_.start_step) {
        step_ = *options_.start_step;
    } else {
        base.refresh();
        const auto steps = base.steps(mode::global, true);
        if (steps.empty()) {
            if (base.loaded_all_steps()) {
                result_.end = evaluation_end::no_more_data;
                done_ = true;
                explain_if_nothing_evaluated();
            }
            return false; // waiting for the run's first step, unless it ended without one
        }
        step_ = steps.front();
    }
    if (options_.snapshot && !options_.end_step && !base.loaded_all_steps()) {
        // The steps written so far: a live run's later steps are not evaluated.
        const auto steps = base.steps(mode::global, true);
        options_.end_step = steps.empty() ? step_ : steps.back() + 1;
    }
    started_ = true;
    waiting_for_.reset();
    result_.first_step = step_;
    result_.next_step = step_;
    r.logger().debug(fmt::format("started rule {} at step {}", result_.rule, step_));
    return true;
}

TDBG_DECL void rule_evaluation::record(std::int64_t step, step_outcome outcome) {
    result_.next_step = step + 1;
    if (options_.on_step) {
        options_.on_step(step, outcome);
    }
}

namespace detail {

// Ends an evaluation (sets `done`) when its scope is left by an exception: a rule's error, or
// the raise of raise_eval_cond.
class done_on_throw {
public:
    explicit done_on_throw(bool& done) : flag_(done) {}
    done_on_throw(const done_on_throw&) = delete;
    done_on_throw& operator=(const done_on_throw&) = delete;
    done_on_throw(done_on_throw&&) = delete;
    done_on_throw& operator=(done_on_throw&&) = delete;
    ~done_on_throw() {
        if (std::uncaught_exceptions() > uncaught_) {
            flag_ = true;
        }
    }

private:
    bool& flag_;
    int uncaught_ = std::uncaught_exceptions();
};

// `step` as a batch finds it: to evaluate, skipped (never saved: through the step before the
// next one the trial knows) or the run's end; nullopt when it is not there yet. A step the
// trial has loaded is judged without listing the run again (what it says of such a step is
// final): on a live run a listing reads the whole index directory (up to 1000 steps x workers
// files), and one or two per step made a follower of 8 workers fall behind them
// (benchmarks/bench_follow.cpp). The run is listed (one look, never a wait) only when
// `may_list`: for the first step of a batch still to evaluate.
inline std::optional<pending_outcome> look_at_step(const trial& base, std::int64_t step,
                                                   const std::optional<std::int64_t>& end_step, bool may_list) {
    pending_outcome slot;
    slot.step = step;
    slot.last = step;
    const auto skip_unsaved = [&] {
        slot.what = pending_outcome::kind::skipped;
        slot.reason = std::string(skip_reason::step_unavailable);
        slot.last = unsaved_through(base, step, end_step);
        slot.unsaved = true;
    };
    const step_state loaded = [&] {
        const refresh_pause paused = base.pause_refresh();
        return base.has_passed_step(step);
    }();
    if (loaded == step_state::available) {
        slot.what = pending_outcome::kind::not_triggered; // to be evaluated
        return slot;
    }
    if (loaded == step_state::unavailable && base.step_after(step)) {
        skip_unsaved();
        return slot;
    }
    if (!may_list) {
        return std::nullopt; // evaluate what is there first; the next batch looks for this step
    }
    try {
        base.wait_for_steps({step}, mode::global, std::chrono::milliseconds(0));
        slot.what = pending_outcome::kind::not_triggered; // to be evaluated
    } catch (const step_unavailable&) {
        skip_unsaved();
    } catch (const no_more_data&) {
        slot.what = pending_outcome::kind::ended;
    } catch (const step_not_yet_available&) {
        return std::nullopt;
    }
    return slot;
}

} // namespace detail

// The steps of the next batch: the first, and the following ones only if they have passed
// already (a live run's next step is waited for after this batch). True when the batch ends at
// a step that is not written yet, which the evaluation then waits for.
TDBG_DECL bool rule_evaluation::collect_batch(std::vector<detail::pending_outcome>& batch) const {
    using detail::pending_outcome;
    const trial& base = rule_->base_trial();
    std::size_t to_evaluate = 0;
    std::int64_t step = step_;
    while (to_evaluate < batch_limit_ && !past_end(step)) {
        const bool may_list = to_evaluate == 0;
        std::optional<pending_outcome> slot = detail::look_at_step(base, step, options_.end_step, may_list);
        if (!slot) {
            return may_list;
        }
        if (slot->what == pending_outcome::kind::not_triggered) {
            ++to_evaluate;
        }
        const bool ended = slot->what == pending_outcome::kind::ended;
        step = slot->last + 1;
        batch.push_back(std::move(*slot));
        if (ended) {
            break;
        }
    }
    return false;
}

// Evaluates the batch's steps to evaluate: in parallel when there are several (rules that
// declare parallel_steps), each reading its inputs on one thread; a single step reads its
// inputs on all of them.
TDBG_DECL void rule_evaluation::evaluate_batch(std::vector<detail::pending_outcome>& batch) {
    using detail::pending_outcome;
    rule_base& r = *rule_;
    std::vector<std::size_t> pending;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (batch[i].what == pending_outcome::kind::not_triggered) {
            pending.push_back(i);
        }
    }
    const auto pauses = detail::pause_trials(r);
    if (pending.size() == 1) {
        batch[pending[0]] = detail::rule_runner::evaluate_step(r, batch[pending[0]].step, threads_);
    } else if (!pending.empty()) {
        tdbg::detail::parallel_for_each_index(pending.size(), threads_, [&](std::size_t i) {
            batch[pending[i]] = detail::rule_runner::evaluate_step(r, batch[pending[i]].step, 1);
        });
    }
}

// Folds one step's outcome into the result, in step order: records it, runs the rule's actions
// on a trigger, and ends the evaluation where the outcome says so.
TDBG_DECL void rule_evaluation::fold(detail::pending_outcome& o) {
    using detail::pending_outcome;
    rule_base& r = *rule_;
    // A step the rule fired at while it was waited for (check_while_waiting) is not recorded again.
    const bool fired_while_waiting = !result_.triggered_steps.empty() && result_.triggered_steps.back() == o.step;
    step_ = o.last + 1;
    switch (o.what) {
    case pending_outcome::kind::triggered:
        if (fired_while_waiting) {
            record(o.step, step_outcome::triggered); // recorded, and its actions run, then
            break;
        }
        result_.triggered_steps.push_back(o.step);
        if (!o.reason.empty()) {
            result_.trigger_reasons[o.step] = o.reason;
        }
        record(o.step, step_outcome::triggered);
        r.actions().invoke(trigger{result_.rule, o.step, o.reason}, r.logger());
        if (options_.raise_eval_cond) {
            result_.end = evaluation_end::condition_met;
            throw rule_evaluation_condition_met(result_.rule, o.step, o.end_of_rule);
        }
        if (o.end_of_rule) {
            result_.end = evaluation_end::end_of_rule;
            done_ = true;
        }
        break;
    case pending_outcome::kind::not_triggered:
        if (!fired_while_waiting) {
            result_.not_triggered_steps.push_back(o.step);
        }
        record(o.step, fired_while_waiting ? step_outcome::triggered : step_outcome::not_triggered);
        break;
    case pending_outcome::kind::skipped:
        if (o.last == o.step) {
            r.logger().debug(fmt::format("rule {}: step {} skipped ({})", result_.rule, o.step, o.reason));
        } else {
            r.logger().debug(fmt::format("rule {}: steps {}-{} skipped ({})", result_.rule, o.step, o.last, o.reason));
        }
        result_.skipped_steps[o.reason].add(o.step, o.last);
        if (o.unsaved) {
            result_.unsaved_steps.add(o.step, o.last);
        }
        record(o.last, step_outcome::skipped);
        break;
    case pending_outcome::kind::ended:
        result_.end = evaluation_end::no_more_data;
        done_ = true;
        break;
    case pending_outcome::kind::failed: std::rethrow_exception(o.error);
    }
}

TDBG_DECL advance_result rule_evaluation::advance(clock::time_point deadline) {
    if (!options_.record_errors) {
        return advance_steps(deadline);
    }
    try {
        return advance_steps(deadline);
    } catch (const rule_evaluation_condition_met&) {
        throw;
    } catch (const std::exception& e) {
        return ended_by_error(e);
    }
}

TDBG_DECL advance_result rule_evaluation::ended_by_error(const std::exception& e) {
    if (stop_requested()) {
        result_.end = evaluation_end::interrupted; // a read the stop cut short (an S3 request cancelled)
    } else {
        result_.error = *e.what() != '\0' ? e.what() : "unknown error";
    }
    done_ = true;
    advance_result out;
    out.state = evaluation_state::done;
    out.progressed = true;
    return out;
}

TDBG_DECL advance_result rule_evaluation::advance_steps(clock::time_point deadline) {
    advance_result out;
    if (done_) {
        out.state = evaluation_state::done;
        return out;
    }
    const detail::done_on_throw guard(done_); // anything thrown from here on ends the evaluation
    if (stop_requested()) {
        interrupt();
    } else if (!started_ && !start()) {
        if (options_.snapshot) {
            skip_waited_step(); // no step written yet: nothing to evaluate
        }
        out.state = done_ ? evaluation_state::done : evaluation_state::waiting;
        out.progressed = done_;
        return out;
    }
    while (!done_) {
        if (stop_requested()) {
            interrupt();
            break;
        }
        if (past_end(step_)) {
            result_.end = evaluation_end::end_step;
            done_ = true;
            break;
        }
        if (out.progressed && clock::now() >= deadline) {
            out.state = evaluation_state::running;
            return out;
        }
        std::vector<detail::pending_outcome> batch;
        const bool waiting = collect_batch(batch);
        evaluate_batch(batch);
        bool interrupted = false;
        for (detail::pending_outcome& o : batch) {
            out.progressed = true;
            fold(o);
            if (done_) {
                break; // steps evaluated after it in this batch do not count
            }
            if (stop_requested()) {
                interrupted = true; // between two steps: the steps after it in the batch do not count
                break;
            }
        }
        if (interrupted) {
            interrupt();
        } else if (waiting && !done_ && options_.snapshot) {
            skip_waited_step(); // a snapshot never waits: the step is skipped, and the next looked at
            out.progressed = true;
        } else if (waiting && !done_) {
            waiting_for_ = step_;
            out.state = evaluation_state::waiting;
            out.waiting_for = waiting_for_;
            return out;
        }
    }
    rule_->logger().debug(fmt::format("ended rule {} before step {}", result_.rule, result_.next_step.value_or(step_)));
    try {
        result_.tensor_coverage = detail::rule_runner::explain_reductions_only(*rule_);
    } catch (const std::exception& e) {
        result_.tensor_coverage = fmt::format("its selected tensors could not be looked at: {}", e.what());
    }
    // What a rule that compares steps compared: having looked at every step, it may have compared none.
    result_.comparisons = detail::rule_runner::comparisons(*rule_);
    explain_if_nothing_evaluated();
    out.state = evaluation_state::done;
    out.progressed = true;
    return out;
}

TDBG_DECL void rule_evaluation::explain_if_nothing_evaluated() {
    if (result_.status() != evaluation_status::nothing_evaluated) {
        return;
    }
    const trial& base = rule_->base_trial();
    std::vector<std::string> parts;
    const auto range = [&] {
        return options_.end_step ? fmt::format("steps {} to {}", result_.first_step.value_or(step_), *options_.end_step - 1)
                                 : fmt::format("steps from {}", result_.first_step.value_or(step_));
    };
    const bool compared_nothing = result_.evaluated_steps() > 0 && result_.comparisons;
    if (compared_nothing) {
        // Every step looked at, and none compared with another: say what the rule needed.
        parts.push_back(fmt::format("it compared nothing: {}", result_.comparisons->text));
    } else if (!started_) {
        parts.push_back(fmt::format("the run '{}' has no step", base.name()));
    } else if (result_.all_skipped_steps() == result_.unsaved_steps) {
        parts.push_back(base.steps(mode::global, true).empty()
                            ? fmt::format("the run '{}' has no step", base.name())
                            : fmt::format("the run '{}' has no step in {}", base.name(), range()));
    }
    // What the rule's selection named, when it selects nothing (a typo, the wrong collection).
    std::string selection;
    try {
        selection = detail::rule_runner::explain_selection(*rule_);
    } catch (const std::exception& e) {
        selection = fmt::format("its selection could not be looked at: {}", e.what());
    }
    if (!selection.empty()) {
        parts.push_back(std::move(selection));
    }
    const std::string coverage = describe_coverage(result_);
    if (!compared_nothing && result_.all_skipped_steps() != result_.unsaved_steps) {
        parts.push_back(fmt::format("every step was skipped ({})", coverage));
    }
    std::string reason;
    for (const std::string& part : parts) {
        reason.append(reason.empty() ? "" : "; ").append(part);
    }
    result_.nothing_evaluated_reason = reason.empty() ? fmt::format("no step was evaluated ({})", coverage) : reason;
}

TDBG_DECL bool rule_evaluation::check_while_waiting() {
    if (done_ || !started_ || !waiting_for_) {
        return false;
    }
    const std::int64_t next_step = *waiting_for_;
    if (!result_.triggered_steps.empty() && result_.triggered_steps.back() == next_step) {
        return false; // fired already while waiting for this step
    }
    const verdict v = detail::rule_runner::while_waiting(*rule_, next_step);
    if (!v.met()) {
        return false;
    }
    result_.triggered_steps.push_back(next_step);
    if (!v.reason().empty()) {
        result_.trigger_reasons[next_step] = v.reason();
    }
    rule_->actions().invoke(trigger{result_.rule, next_step, v.reason()}, rule_->logger());
    return true;
}

TDBG_DECL void rule_evaluation::skip_waited_step() {
    if (done_) {
        return;
    }
    if (!started_) {
        result_.end = evaluation_end::no_more_data; // no step came in time: nothing to evaluate
        done_ = true;
        explain_if_nothing_evaluated();
        return;
    }
    result_.skipped_steps[std::string(skip_reason::step_not_yet_available)].add(step_, step_);
    record(step_, step_outcome::skipped);
    ++step_;
    waiting_for_.reset();
}

TDBG_DECL void rule_evaluation::interrupt() {
    if (!done_) {
        result_.end = evaluation_end::interrupted; // status Stopped unless it found issues
        done_ = true;
    }
}

TDBG_DECL void rule_evaluation::run() {
    if (!options_.record_errors) {
        run_steps();
        return;
    }
    try {
        run_steps();
    } catch (const rule_evaluation_condition_met&) {
        throw;
    } catch (const std::exception& e) {
        (void)ended_by_error(e);
    }
}

TDBG_DECL void rule_evaluation::run_steps() {
    // The step being waited for, -1 for the run's first step (steps are >= 0). A plain number,
    // not an optional: GCC's -O2 takes a disengaged optional compared here for an uninitialised one.
    constexpr std::int64_t first_step = -1;
    std::int64_t waited_for = first_step;
    auto since = clock::now();
    for (;;) {
        const advance_result a = advance();
        if (a.state == evaluation_state::done) {
            return;
        }
        const auto now = clock::now();
        if (a.progressed || a.waiting_for.value_or(first_step) != waited_for) {
            waited_for = a.waiting_for.value_or(first_step); // a new wait begins
            since = now;
        }
        auto pause = options_.poll_interval;
        if (options_.step_timeout) {
            const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - since);
            if (waited >= *options_.step_timeout) {
                if (!options_.skip_late_steps) {
                    const std::string& trial_name = rule_->base_trial().name();
                    throw step_not_yet_available(
                        waited_for != first_step
                            ? fmt::format("step {} of mode GLOBAL is not yet available (trial {})", waited_for,
                                          trial_name)
                            : fmt::format("no step of trial {} has been written yet", trial_name),
                        {}, waited_for, mode::global);
                }
                skip_waited_step();
                waited_for = first_step;
                since = now;
                continue;
            }
            pause = std::min(pause, *options_.step_timeout - waited + std::chrono::milliseconds(1));
        }
        std::this_thread::sleep_for(pause);
    }
}

TDBG_DECL evaluation_result invoke_rule(rule_base& r, const invoke_options& options) {
    rule_evaluation evaluation(r, options);
    evaluation.run();
    return evaluation.take_result();
}

TDBG_DECL evaluation_result invoke_rule(rule_base& r, std::optional<std::int64_t> start_step,
                                        std::optional<std::int64_t> end_step, bool raise_eval_cond) {
    invoke_options options;
    options.start_step = start_step;
    options.end_step = end_step;
    options.raise_eval_cond = raise_eval_cond;
    return invoke_rule(r, options);
}

} // namespace tdbg::rules
