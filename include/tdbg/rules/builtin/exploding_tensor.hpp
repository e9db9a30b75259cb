#pragma once
/// \file
/// ExplodingTensor: met at a step when a selected tensor's value there holds a
/// NaN or (unless `only_nan`) an infinity.
///
/// Parameters (AWS's published defaults): `collection_names` (list, None),
/// `tensor_regex` (list, None), `only_nan` (bool, False). With neither list
/// every tensor is checked. Every worker's value is checked (a NaN on one
/// rank is an explosion). Only floating and complex values can be non-finite;
/// other dtypes are evaluated and never trigger. A tensor saved only as
/// reductions has no value and is not evaluated; a step where no selected
/// tensor has a value is skipped (TensorUnavailableForStep). Parallel steps.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tdbg/core/mode.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// ExplodingTensor over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_exploding_tensor : public rule<basic_exploding_tensor<Storage>, Storage> {
    using base = rule<basic_exploding_tensor<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "ExplodingTensor";
    static constexpr bool parallel_steps = true;

    /// The rule over `trial`, configured by `params`.
    explicit basic_exploding_tensor(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), selection_(detail::selection_from<Storage>(params, true)),
          only_nan_(params.get("only_nan", false)) {}

    /// True when a selected tensor's value at `step` is not finite.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        return detail::any_tensor(selection_.names(this->base_trial()), step, this->name(),
                                  [&](const std::string& name) -> std::optional<bool> {
                                      auto t = this->tensor(name);
                                      bool evaluated = false;
                                      for (const std::string& worker : t.workers(step)) {
                                          try {
                                              if (has_non_finite(this->value(name, step, mode::global, worker), only_nan_)) {
                                                  this->set_reason(detail::concat(name, " (", worker, ") is not finite"));
                                                  return true;
                                              }
                                              evaluated = true;
                                          } catch (const tensor_unavailable_for_step&) {
                                              // this worker saved only reductions or a shape
                                          }
                                      }
                                      return evaluated ? std::optional<bool>(false) : std::nullopt;
                                  });
    }

private:
    detail::tensor_selection<Storage> selection_;
    bool only_nan_;
};

/// ExplodingTensor over local runs.
using exploding_tensor = basic_exploding_tensor<>;

} // namespace tdbg::rules
