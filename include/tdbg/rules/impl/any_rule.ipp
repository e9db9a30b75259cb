#pragma once
/// \file
/// Definitions of tdbg/rules/any_rule.hpp.

#include <exception>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/any_rule.hpp"
#include "tdbg/rules/invoke.hpp"

namespace tdbg::rules {

TDBG_DECL evaluation_result any_rule::evaluate(const invoke_options& options) {
    rule_evaluation evaluation(*self_, options);
    try {
        evaluation.run();
    } catch (const rule_evaluation_condition_met&) {
        throw;
    } catch (const std::exception& e) {
        evaluation_result result = evaluation.take_result(); // what was found before the error
        result.error = *e.what() != '\0' ? e.what() : "unknown error";
        return result;
    }
    return evaluation.take_result();
}

} // namespace tdbg::rules
