#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/all_zero.hpp.

#include <optional>
#include <string>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/builtin/all_zero.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL all_zero::all_zero(trial base, const rule_params& params)
    : rule(std::move(base), params), selection_(detail::selection_from(params, false)),
      threshold_(params.get("threshold", 100.0, non_negative)) {
    if (selection_.unspecified()) {
        throw config_error("rule AllZero: give collection_names or tensor_regex (or both)");
    }
}

TDBG_DECL verdict all_zero::invoke_at_step(std::int64_t step) const {
    return detail::any_tensor(selection_.names(base_trial()), step, name(),
                              [&](const std::string& tensor_name) -> std::optional<verdict> {
                                  const auto t = tensor(tensor_name);
                                  bool evaluated = false;
                                  for (const std::string& worker : t.workers(step)) {
                                      tensor_value v;
                                      try {
                                          v = value(tensor_name, step, mode::global, worker);
                                      } catch (const tensor_unavailable_for_step&) {
                                          continue;
                                      }
                                      if (v.type() == dtype::string || v.size() == 0) {
                                          continue;
                                      }
                                      evaluated = true;
                                      const double percent =
                                          100.0 * static_cast<double>(count_zeros(v)) / static_cast<double>(v.size());
                                      if (percent >= threshold_) {
                                          return condition_met(
                                              fmt::format("{} ({}) is {:.6g}% zeros", tensor_name, worker, percent));
                                      }
                                  }
                                  if (!evaluated) {
                                      return std::nullopt;
                                  }
                                  return verdict(false);
                              });
}

} // namespace tdbg::rules
