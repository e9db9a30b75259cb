#pragma once
/// \file
/// DeadRelu: met at a step when, in some ReLU layer, more than
/// `threshold_layer` percent of the units are dead: active (output > 0) for
/// less than `threshold_inactivity` percent of the samples.
///
/// Parameters (AWS's published defaults): `tensor_regex` (list),
/// `threshold_inactivity` (float percent, 1.0), `threshold_layer` (float
/// percent, 50.0). Interpretation: a layer is a tensor of ReLU outputs; with
/// two or more dimensions the first is the batch and every position of the
/// others is a unit, a 0-d or 1-d tensor is one sample. AWS documents
/// tensor_regex as None ("all tensors"), but SageMaker's configuration for
/// this rule saves only the collection ".*relu_output": tdbg uses that regex
/// when none is given (weights checked as "ReLUs" would always look half dead).
/// Tensors without a value are not evaluated; a step with none is skipped
/// (TensorUnavailableForStep). Parallel steps.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/dtype.hpp"
#include "tdbg/rules/detail/activity.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// DeadRelu over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_dead_relu : public rule<basic_dead_relu<Storage>, Storage> {
    using base = rule<basic_dead_relu<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "DeadRelu";
    static constexpr bool parallel_steps = true;

    /// The rule over `trial`, configured by `params`.
    explicit basic_dead_relu(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params),
          selection_({}, params.get<std::vector<std::string>>("tensor_regex", {".*relu_output"}), false),
          threshold_inactivity_(params.get("threshold_inactivity", 1.0)),
          threshold_layer_(params.get("threshold_layer", 50.0)) {}

    /// True when some ReLU layer at `step` has too many dead units.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        return detail::any_tensor(selection_.names(this->base_trial()), step, this->name(),
                                  [&](const std::string& name) -> std::optional<bool> {
                                      const tensor_value v = this->value(name, step);
                                      if (!is_real_valued(v.type()) || v.size() == 0) {
                                          return std::nullopt;
                                      }
                                      const double dead = detail::inactive_unit_percent(
                                          v, threshold_inactivity_, [](double x) { return x > 0.0; });
                                      if (dead > threshold_layer_) {
                                          this->set_reason(std::to_string(dead) + "% of the units of " + name + " are dead");
                                          return true;
                                      }
                                      return false;
                                  });
    }

private:
    detail::tensor_selection<Storage> selection_;
    double threshold_inactivity_;
    double threshold_layer_;
};

/// DeadRelu over local runs.
using dead_relu = basic_dead_relu<>;

} // namespace tdbg::rules
