#pragma once
/// \file
/// Definitions of tdbg/rules/any_rule.hpp.

#include <exception>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/any_rule.hpp"

namespace tdbg::rules {

TDBG_DECL evaluation_result any_rule::evaluate(const invoke_options& options) {
    evaluation_result result;
    try {
        detail::run_rule(*self_, options, result);
    } catch (const rule_evaluation_condition_met&) {
        throw;
    } catch (const std::exception& e) {
        result.error = e.what();
        if (result.error.empty()) {
            result.error = "unknown error";
        }
    }
    if (result.rule.empty()) {
        result.rule = self_->name();
        result.configuration_name = self_->configuration_name();
    }
    return result;
}

} // namespace tdbg::rules
