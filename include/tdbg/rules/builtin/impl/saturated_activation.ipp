#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/saturated_activation.hpp.

#include <optional>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/rules/builtin/saturated_activation.hpp"
#include "tdbg/rules/detail/activity.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL saturated_activation::saturated_activation(trial base, const rule_params& params)
    : rule(std::move(base), params),
      selection_(detail::selection_from(params, false, {".*tanh_input", ".*sigmoid_input"})),
      tanh_(params.get("threshold_tanh", number_pair{-9.4999, 9.4999})),
      sigmoid_(params.get("threshold_sigmoid", number_pair{-23.0, 16.99999})),
      threshold_inactivity_(params.get("threshold_inactivity", 1.0, non_negative)),
      threshold_layer_(params.get("threshold_layer", 50.0, non_negative)) {}

TDBG_DECL verdict saturated_activation::invoke_at_step(std::int64_t step) const {
    return detail::any_tensor(selection_.names(base_trial()), step, name(),
                              [&](const std::string& tensor_name) -> std::optional<verdict> {
                                  const bool sigmoid = tensor_name.find("sigmoid") != std::string::npos;
                                  if (!sigmoid && tensor_name.find("tanh") == std::string::npos) {
                                      return std::nullopt;
                                  }
                                  const tensor_value v = value(tensor_name, step);
                                  if (!is_real_valued(v.type()) || v.size() == 0) {
                                      return std::nullopt;
                                  }
                                  const number_pair range = sigmoid ? sigmoid_ : tanh_;
                                  const double saturated = detail::inactive_unit_percent(
                                      v, threshold_inactivity_,
                                      [&](double x) { return x > range.first && x < range.second; });
                                  if (saturated > threshold_layer_) {
                                      return condition_met(fmt::format("{:.6g}% of the units of {} are saturated",
                                                                       saturated, tensor_name));
                                  }
                                  return verdict(false);
                              });
}

} // namespace tdbg::rules
