#pragma once
/// \file
/// Definitions of tdbg/rules/rule.hpp.

#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/rules/rule.hpp"

namespace tdbg::rules {

TDBG_DECL rule_base::~rule_base() = default;

TDBG_DECL rule_base::rule_base(trial base, std::vector<trial> others, rule_params params, std::string_view default_name)
    : base_trial_(std::move(base)), other_trials_(std::move(others)), params_(std::move(params)), name_(default_name) {
    // Parameter errors raised by the derived constructor name the rule.
    if (params_.context().empty()) {
        params_.set_context(name_);
    }
}

TDBG_DECL const trial& rule_base::trial_at(std::size_t index) const {
    if (index == 0) {
        return base_trial_;
    }
    if (index > other_trials_.size()) {
        throw config_error(fmt::format("rule {}: trial index {} but only {} other trial(s)", name_, index,
                                       other_trials_.size()));
    }
    return other_trials_[index - 1];
}

TDBG_DECL tdbg::tensor rule_base::tensor(const std::string& name) const { return base_trial_.tensor(name); }

TDBG_DECL tensor_value rule_base::value(const std::string& name, std::int64_t step, mode m,
                                        const std::optional<std::string>& worker) const {
    return base_trial_.tensor(name).value(step, m, worker);
}

TDBG_DECL tensor_value rule_base::reduction_value(const std::string& name, std::int64_t step, reduction r, mode m,
                                                  const std::optional<std::string>& worker) const {
    return base_trial_.tensor(name).reduction_value(step, r, m, worker);
}

TDBG_DECL tensor_value rule_base::read(const tensor_request& request) const {
    std::optional<tdbg::tensor> looked_up;
    if (!request.handle) {
        looked_up = trial_at(request.trial_index).tensor(request.name);
    }
    const tdbg::tensor& handle = request.handle ? *request.handle : *looked_up;
    if (request.which) {
        return handle.reduction_value(request.step, *request.which, request.step_mode, request.worker);
    }
    return handle.value(request.step, request.step_mode, request.worker);
}

} // namespace tdbg::rules
