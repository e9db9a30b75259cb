#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/stalled_training_rule.hpp.

#include <chrono>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/actions.hpp"
#include "tdbg/rules/builtin/stalled_training_rule.hpp"

namespace tdbg::rules {

TDBG_DECL stalled_training_rule::stalled_training_rule(trial base, const rule_params& params)
    : rule(std::move(base), params), threshold_(params.get<std::int64_t>("threshold", 1800, non_negative)) {
    const bool stop = params.get("stop_training_on_fire", false);
    (void)params.get_optional<std::string>("training_job_name_prefix");
    if (stop) {
        actions().add(stop_training_action(base_trial().storage()));
    }
}

TDBG_DECL verdict stalled_training_rule::invoke_at_step(std::int64_t step) {
    // The wall time of the first record of the step's event file (first worker that has one).
    const std::optional<double> time = base_trial().wall_time(step);
    if (!time) {
        return false;
    }
    const std::optional<double> previous = last_time_;
    last_time_ = time;
    ++timed_steps_;
    pairs_ += previous ? 1 : 0;
    if (previous && *time - *previous > static_cast<double>(threshold_)) {
        return condition_met(fmt::format("no step for {:.6g} s before step {}, more than {} s", *time - *previous, step,
                                         threshold_));
    }
    return false;
}

TDBG_DECL comparison_coverage stalled_training_rule::comparisons() const {
    return {pairs_, fmt::format("{} step{} with a time, {} pair{} of steps", timed_steps_, timed_steps_ == 1 ? "" : "s",
                                pairs_, pairs_ == 1 ? "" : "s")};
}

TDBG_DECL verdict stalled_training_rule::while_waiting(std::int64_t next_step) {
    if (!last_time_) {
        return false; // no step seen yet: no time to count from
    }
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    if (now - *last_time_ > static_cast<double>(threshold_)) {
        return condition_met(fmt::format("no step for {:.6g} s, waiting for step {}, more than {} s", now - *last_time_,
                                         next_step, threshold_));
    }
    return false;
}

TDBG_DECL rule_description stalled_training_rule::describe() {
    return {"Training stalled: no new step for too long.",
            "Met at a step when more than threshold seconds passed between it and the previous step. A step's time "
            "is the wall time of its event file, so a finished run is judged as it would have been live. While the "
            "next step of a live run is awaited (tdbg rules --follow, the watcher), the rule also fires once more "
            "than threshold seconds have passed since the last step.\n\nWith stop_training_on_fire it also writes "
            "the stop marker, which stops a training loop with a tdbg hook. training_job_name_prefix names a "
            "SageMaker job: it is accepted, and not needed.",
            {{"threshold", "1800", "the seconds without a new step after which training counts as stalled"},
             {"stop_training_on_fire", "False", "True: stop the training when the rule fires"},
             {"training_job_name_prefix", "None", "SageMaker's training job name prefix (accepted, unused)"}},
            step_dependence::carried_state};
}

} // namespace tdbg::rules

#if !TDBG_HEADER_ONLY
TDBG_DETAIL_RULE_BASES(template, stalled_training_rule)
#endif
