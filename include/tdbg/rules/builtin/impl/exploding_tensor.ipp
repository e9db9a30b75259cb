#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/exploding_tensor.hpp.

#include <optional>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/builtin/exploding_tensor.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL exploding_tensor::exploding_tensor(trial base, const rule_params& params)
    : rule(std::move(base), params), selection_(detail::selection_from(params, true)),
      only_nan_(params.get("only_nan", false)) {}

TDBG_DECL verdict exploding_tensor::invoke_at_step(std::int64_t step) const {
    return detail::any_tensor(selection_.names(base_trial()), step, name(),
                              [&](const std::string& tensor_name) -> std::optional<verdict> {
                                  const auto t = tensor(tensor_name);
                                  bool evaluated = false;
                                  for (const std::string& worker : t.workers(step)) {
                                      try {
                                          if (has_non_finite(value(tensor_name, step, mode::global, worker), only_nan_)) {
                                              return condition_met(fmt::format("{} ({}) is not finite", tensor_name, worker));
                                          }
                                          evaluated = true;
                                      } catch (const tensor_unavailable_for_step&) {
                                          // this worker saved only reductions or a shape
                                      }
                                  }
                                  if (!evaluated) {
                                      return std::nullopt;
                                  }
                                  return verdict(false);
                              });
}

} // namespace tdbg::rules
