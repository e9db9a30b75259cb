#pragma once
/// \file
/// `invoke_rule`: evaluates a rule step after step, with smdebug's semantics.
///
/// From `start_step` (smdebug: 0; here, when not given, the trial's first
/// step) up to `end_step` (exclusive; none: until the run ends), each global
/// step is first waited for in the base trial (wait_for_steps: a live run is
/// polled until the step is there). Then, with refreshing off as in smdebug,
/// the step's declared tensors are fetched and `invoke_at_step(step)` runs.
///   - A step that was not saved (step_unavailable), or where the rule read a
///     tensor that has no value at that step (tensor_unavailable_for_step) or
///     a tensor never saved (tensor_unavailable), is skipped and recorded
///     under that exception's smdebug name.
///   - no_more_data (the run ended before the step) ends the evaluation.
///   - When invoke_at_step returns true the rule's actions run; with
///     `raise_eval_cond` rule_evaluation_condition_met is thrown at that
///     first step, otherwise the step is recorded and evaluation goes on.
///   - Any other exception propagates (the registry's evaluate() turns it
///     into an Error status).
/// Rules declaring `parallel_steps` are evaluated at several available steps
/// at once; outcomes are folded in step order, so results, actions and the
/// raise happen exactly as in a sequential evaluation.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/detail/parallel.hpp"
#include "tdbg/rules/evaluation.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/trial/step_state.hpp"
#include "tdbg/trial/trial.hpp"

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
    /// Threads for parallel evaluation and prefetching (0: the hardware's; 1: none).
    std::size_t threads = 0;
    /// How often to look for the first step of a run that has none yet.
    std::chrono::milliseconds poll_interval{500};
    /// Called after each step, in step order, from the calling thread.
    std::function<void(std::int64_t step, step_outcome outcome)> on_step;
};

namespace detail {

// One step's outcome before folding.
struct pending_outcome {
    std::int64_t step = 0;
    enum class kind { triggered, not_triggered, skipped, ended, failed } what = kind::not_triggered;
    std::string reason;    // skip reason, or the trigger's reason
    std::exception_ptr error;
};

template <class Rule>
void fetch_requests(const Rule& r, std::vector<tensor_request> requests, step_context& ctx, std::size_t threads) {
    // Other steps a request names must have passed, as smdebug's fetch waits for them.
    std::set<std::int64_t> others;
    for (const auto& q : requests) {
        if (q.trial_index == 0 && q.step_mode == mode::global && q.step != ctx.step) {
            others.insert(q.step);
        }
    }
    if (!others.empty()) {
        r.base_trial().wait_for_steps(std::vector<std::int64_t>(others.begin(), others.end()));
    }
    std::vector<std::optional<tensor_value>> got(requests.size());
    parallel_for_each_index(requests.size(), threads, [&](std::size_t i) {
        try {
            got[i] = r.read_request(requests[i]);
        } catch (const tensor_unavailable_for_step&) {
            if (!requests[i].optional) {
                throw;
            }
        } catch (const tensor_unavailable&) {
            if (!requests[i].optional) {
                throw;
            }
        } catch (const step_unavailable&) {
            if (!requests[i].optional) {
                throw;
            }
        } catch (const invalid_worker&) {
            if (!requests[i].optional) {
                throw;
            }
        } catch (const dtype_mismatch&) {
            if (!requests[i].optional) {
                throw; // e.g. a reduction of a string tensor
            }
        }
    });
    ctx.requests = std::move(requests);
    ctx.values = std::move(got);
    ctx.index.reserve(ctx.requests.size());
    for (std::size_t i = 0; i < ctx.requests.size(); ++i) {
        ctx.index.emplace(key_of(ctx.requests[i]), i); // views the strings of ctx.requests, which no longer move
    }
}

// Evaluates `r` at `step` (which has passed); never throws.
template <class Derived, class Storage>
pending_outcome evaluate_step(rule<Derived, Storage>& r, std::int64_t step, std::size_t fetch_threads) {
    pending_outcome out;
    out.step = step;
    step_context ctx;
    ctx.owner = static_cast<const void*>(&r);
    ctx.step = step;
    try {
        Derived& d = r.derived();
        std::vector<tensor_request> requests = d.required_tensors(step);
        if (!requests.empty()) {
            fetch_requests(d, std::move(requests), ctx, fetch_threads);
        }
        const context_scope scope(&ctx);
        const bool met = d.invoke_at_step(step);
        out.what = met ? pending_outcome::kind::triggered : pending_outcome::kind::not_triggered;
        out.reason = std::move(ctx.reason);
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

template <class Storage>
std::vector<std::shared_ptr<std::atomic<bool>>> refresh_flags(const trial<Storage>& base,
                                                              const std::vector<trial<Storage>>& others) {
    std::vector<std::shared_ptr<std::atomic<bool>>> flags{base.refresh_flag()};
    for (const auto& t : others) {
        flags.push_back(t.refresh_flag());
    }
    return flags;
}

// The trial's first global step, waiting for one when the run has none yet; none when it ended empty.
template <class Storage>
std::optional<std::int64_t> first_step(const trial<Storage>& t, const invoke_options& options) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        t.refresh();
        const auto steps = t.steps(mode::global, true);
        if (!steps.empty()) {
            return steps.front();
        }
        if (t.loaded_all_steps()) {
            return std::nullopt;
        }
        if (options.step_timeout && std::chrono::steady_clock::now() - start >= *options.step_timeout) {
            if (options.skip_late_steps) {
                return std::nullopt;
            }
            throw step_not_yet_available("no step of trial " + t.name() + " has been written yet");
        }
        std::this_thread::sleep_for(options.poll_interval);
    }
}

inline void add_skip(evaluation_result& result, const std::string& reason, std::int64_t step) {
    result.skipped_steps[reason].push_back(step);
}

/// invoke_rule's loop, recording into `result` as it goes (so that a caller
/// catching an exception keeps what was found before it).
template <class Derived, class Storage>
void run_rule(rule<Derived, Storage>& r, const invoke_options& options, evaluation_result& result) {
    Derived& d = r.derived();
    result.rule = r.name();
    result.params = r.params().items();
    r.params().check_unknown();
    result.resolved_params = r.params().resolved();

    const trial<Storage>& base = r.base_trial();
    std::int64_t step = 0;
    if (options.start_step) {
        step = *options.start_step;
    } else if (auto first = first_step(base, options)) {
        step = *first;
    } else {
        result.end = evaluation_end::no_more_data;
        return;
    }
    result.first_step = step;
    result.next_step = step;
    r.logger().debug("started rule " + result.rule + " at step " + std::to_string(step));

    constexpr bool parallel = parallel_steps_v<Derived>;
    const std::size_t threads = thread_count(options.threads);
    const std::size_t batch_limit = parallel && threads > 1 ? 64 : 1;
    const auto past_end = [&](std::int64_t s) { return options.end_step && s >= *options.end_step; };

    auto record = [&](std::int64_t s, step_outcome outcome) {
        result.next_step = s + 1;
        if (options.on_step) {
            options.on_step(s, outcome);
        }
    };

    bool finished = false;
    while (!finished) {
        if (past_end(step)) {
            result.end = evaluation_end::end_step;
            break;
        }
        // Collect steps: wait for the first, take the following ones only if they
        // have passed already (a live run's next step is waited for after this batch).
        std::vector<pending_outcome> batch;
        std::size_t to_evaluate = 0;
        std::exception_ptr late;
        while (to_evaluate < batch_limit && !past_end(step)) {
            if (to_evaluate > 0 && base.has_passed_step(step) == step_state::not_yet_available) {
                break;
            }
            pending_outcome slot;
            slot.step = step;
            try {
                base.wait_for_steps({step}, mode::global, to_evaluate > 0 ? std::optional(std::chrono::milliseconds(0))
                                                                          : options.step_timeout);
                slot.what = pending_outcome::kind::not_triggered; // to be evaluated
                ++to_evaluate;
            } catch (const step_unavailable&) {
                slot.what = pending_outcome::kind::skipped;
                slot.reason = std::string(skip_reason::step_unavailable);
            } catch (const no_more_data&) {
                slot.what = pending_outcome::kind::ended;
            } catch (const step_not_yet_available&) {
                if (to_evaluate > 0) {
                    break; // evaluate what is there first
                }
                if (!options.skip_late_steps) {
                    late = std::current_exception();
                    break;
                }
                slot.what = pending_outcome::kind::skipped;
                slot.reason = std::string(skip_reason::step_not_yet_available);
            }
            const bool ended = slot.what == pending_outcome::kind::ended;
            batch.push_back(std::move(slot));
            ++step;
            if (ended) {
                break;
            }
        }

        {
            std::vector<std::size_t> pending;
            for (std::size_t i = 0; i < batch.size(); ++i) {
                if (batch[i].what == pending_outcome::kind::not_triggered) {
                    pending.push_back(i);
                }
            }
            const refresh_guard no_refresh(refresh_flags(base, r.other_trials()), false);
            if (pending.size() == 1) {
                batch[pending[0]] = evaluate_step(r, batch[pending[0]].step, threads);
            } else if (!pending.empty()) {
                parallel_for_each_index(pending.size(), threads, [&](std::size_t i) {
                    batch[pending[i]] = evaluate_step(r, batch[pending[i]].step, 1);
                });
            }
        }

        for (pending_outcome& o : batch) {
            switch (o.what) {
            case pending_outcome::kind::triggered: {
                result.triggered_steps.push_back(o.step);
                record(o.step, step_outcome::triggered);
                d.actions().invoke(trigger{result.rule, o.step, o.reason}, r.logger());
                if (options.raise_eval_cond) {
                    result.end = evaluation_end::condition_met;
                    throw rule_evaluation_condition_met(result.rule, o.step);
                }
                break;
            }
            case pending_outcome::kind::not_triggered:
                result.not_triggered_steps.push_back(o.step);
                record(o.step, step_outcome::not_triggered);
                break;
            case pending_outcome::kind::skipped:
                r.logger().debug("rule " + result.rule + ": step " + std::to_string(o.step) + " skipped (" + o.reason + ")");
                add_skip(result, o.reason, o.step);
                record(o.step, step_outcome::skipped);
                break;
            case pending_outcome::kind::ended:
                finished = true;
                break;
            case pending_outcome::kind::failed:
                std::rethrow_exception(o.error);
            }
            if (finished) {
                break;
            }
        }
        if (finished) {
            result.end = evaluation_end::no_more_data;
        } else if (late) {
            std::rethrow_exception(late);
        }
    }
    r.logger().debug("ended rule " + result.rule + " before step " + std::to_string(result.next_step.value_or(step)));
}

} // namespace detail

/// Evaluates `r` as configured by `options` (see the file comment).
template <class Derived, class Storage>
evaluation_result invoke_rule(rule<Derived, Storage>& r, const invoke_options& options) {
    evaluation_result result;
    detail::run_rule(r, options, result);
    return result;
}

/// smdebug's `invoke_rule(rule, start_step=0, end_step=None, raise_eval_cond=False)`.
template <class Derived, class Storage>
evaluation_result invoke_rule(rule<Derived, Storage>& r, std::optional<std::int64_t> start_step = 0,
                              std::optional<std::int64_t> end_step = std::nullopt, bool raise_eval_cond = false) {
    invoke_options options;
    options.start_step = start_step;
    options.end_step = end_step;
    options.raise_eval_cond = raise_eval_cond;
    return invoke_rule(r, options);
}

} // namespace tdbg::rules
