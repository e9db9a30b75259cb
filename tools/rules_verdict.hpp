#pragma once
// The verdict of `tdbg rules` as a CI gate (cmd_rules.cpp): its exit status over the results,
// where a rule that could not say whether it holds (an error, nothing evaluated, steps left
// unevaluated) fails the gate rather than pass it unseen.

#include <ostream>
#include <string>
#include <vector>

#include "command_registry.hpp"
#include "stop_requests.hpp"
#include "tdbg/cli/commands.hpp"
#include "tdbg/core/text.hpp"
#include "tdbg/rules/evaluation.hpp"

namespace tdbg::cli {

/// The exit status of an evaluation no stop cut short: 2 when a rule could not say (an
/// error; nothing evaluated without --allow-empty; steps left without --allow-partial, each
/// said on `err`), else 1 when a rule found issues, else 0.
[[nodiscard]] inline int rules_gate_status(const std::vector<tdbg::rules::evaluation_result>& results,
                                           const commands::rules_options& o, std::ostream& err) {
    bool issues = false;
    bool errors = false;
    for (const tdbg::rules::evaluation_result& r : results) {
        const tdbg::rules::evaluation_status status = r.status();
        issues = issues || status == tdbg::rules::evaluation_status::issues_found;
        errors = errors || status == tdbg::rules::evaluation_status::error;
        if (status == tdbg::rules::evaluation_status::nothing_evaluated && !o.allow_empty) {
            // Nothing checked is not a pass: a gate over nothing fails, saying why.
            err << "tdbg rules: error: " << tdbg::terminal_safe(r.display_name())
                << " evaluated nothing: " << tdbg::terminal_safe(r.nothing_evaluated_reason)
                << " (--allow-empty if that is expected)\n";
            errors = true;
        }
        const auto late = r.skipped_steps.find(std::string(tdbg::rules::skip_reason::step_not_yet_available));
        if (late != r.skipped_steps.end() && late->second.size() > 0 && !o.allow_partial) {
            // A gate that passed with steps unevaluated would say nothing of them.
            err << "tdbg rules: error: " << tdbg::terminal_safe(r.display_name()) << " left " << late->second.size()
                << " step" << (late->second.size() == 1 ? "" : "s") << " unevaluated ("
                << tdbg::rules::format_steps(late->second, 5)
                << "): a worker has not written them (StepNotYetAvailable) (--allow-partial if that is expected)\n";
            errors = true;
        }
    }
    if (errors) {
        return exit_bad_input;
    }
    return issues ? commands::exit_issues : exit_ok;
}

/// The exit status of `tdbg rules` over `results`: the stop's when one was requested (never 0:
/// the evaluation may have stopped short), else rules_gate_status's.
[[nodiscard]] inline int rules_exit_status(const std::vector<tdbg::rules::evaluation_result>& results,
                                           const commands::rules_options& o, const stop_requests& stop,
                                           std::ostream& err) {
    if (stop.requested()) {
        return stop.exit_status();
    }
    return rules_gate_status(results, o, err);
}

} // namespace tdbg::cli
