#pragma once
/// \file
/// Definitions of tdbg/rules/any_rule.hpp.

#include <exception>
#include <vector>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/any_rule.hpp"
#include "tdbg/rules/invoke.hpp"

namespace tdbg::rules {

TDBG_DECL evaluation_result any_rule::evaluate(const invoke_options& options) {
    invoke_options recording = options;
    recording.record_errors = true; // what was found before an error is kept
    rule_evaluation evaluation(*self_, recording);
    evaluation.run();
    return evaluation.take_result();
}

TDBG_DECL std::vector<evaluation_result> evaluate_snapshot(std::vector<any_rule>& rules, const invoke_options& options) {
    invoke_options snapshot = options;
    snapshot.snapshot = true; // the steps written so far; a live run's unfinished steps are skipped
    std::vector<evaluation_result> results;
    results.reserve(rules.size());
    for (any_rule& r : rules) {
        results.push_back(r.evaluate(snapshot));
    }
    return results;
}

} // namespace tdbg::rules
