#pragma once
/// \file
/// Definitions of tdbg/rules/any_rule.hpp.

#include <exception>

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

} // namespace tdbg::rules
