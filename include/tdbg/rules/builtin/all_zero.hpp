#pragma once
/// \file
/// AllZero: met at a step when at least `threshold` percent of the elements
/// of a selected tensor's value are exactly zero.
///
/// Parameters (AWS's published defaults): `collection_names` (list, None),
/// `tensor_regex` (list, None), `threshold` (float percent, 100). One of the
/// two lists is required; their union is inspected. Every worker's value is
/// checked. String and empty values, and tensors saved only as reductions,
/// are not evaluated; a step where no selected tensor can be is skipped
/// (TensorUnavailableForStep). Parallel steps.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tdbg/core/error.hpp"
#include "tdbg/core/mode.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// AllZero over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_all_zero : public rule<basic_all_zero<Storage>, Storage> {
    using base = rule<basic_all_zero<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "AllZero";
    static constexpr bool parallel_steps = true;

    /// The rule over `trial`, configured by `params`.
    explicit basic_all_zero(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), selection_(detail::selection_from<Storage>(params, false)),
          threshold_(params.get("threshold", 100.0)) {
        if (selection_.unspecified()) {
            throw config_error("rule AllZero: give collection_names or tensor_regex (or both)");
        }
    }

    /// True when a selected tensor's value at `step` is at least `threshold` percent zeros.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        return detail::any_tensor(selection_.names(this->base_trial()), step, this->name(),
                                  [&](const std::string& name) -> std::optional<bool> {
                                      auto t = this->tensor(name);
                                      bool evaluated = false;
                                      for (const std::string& worker : t.workers(step)) {
                                          tensor_value v;
                                          try {
                                              v = this->value(name, step, mode::global, worker);
                                          } catch (const tensor_unavailable_for_step&) {
                                              continue;
                                          }
                                          if (v.type() == dtype::string || v.size() == 0) {
                                              continue;
                                          }
                                          evaluated = true;
                                          const double percent = 100.0 * static_cast<double>(count_zeros(v)) /
                                                                 static_cast<double>(v.size());
                                          if (percent >= threshold_) {
                                              this->set_reason(detail::concat(name, " (", worker, ") is ",
                                                                              std::to_string(percent), "% zeros"));
                                              return true;
                                          }
                                      }
                                      return evaluated ? std::optional<bool>(false) : std::nullopt;
                                  });
    }

private:
    detail::tensor_selection<Storage> selection_;
    double threshold_;
};

/// AllZero over local runs.
using all_zero = basic_all_zero<>;

} // namespace tdbg::rules
