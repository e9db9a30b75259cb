#pragma once
/// \file
/// SaturatedActivation: met at a step when, in some tanh or sigmoid layer,
/// more than `threshold_layer` percent of the units are saturated: their
/// input lies inside (min, max) of the activation's thresholds for less than
/// `threshold_inactivity` percent of the samples.
///
/// Parameters (AWS's published defaults): `collection_names` (list, None),
/// `tensor_regex` (list, ".*tanh_input, .*sigmoid_input"), `threshold_tanh`
/// (pair, (-9.4999, 9.4999)), `threshold_sigmoid` (pair, (-23, 16.99999)),
/// `threshold_inactivity` (float percent, 1.0), `threshold_layer` (float
/// percent, 50.0). Interpretation: a tensor whose name contains "sigmoid"
/// uses threshold_sigmoid, one containing "tanh" threshold_tanh; others are
/// not evaluated. Units and samples as in DeadRelu (first dimension = batch).
/// A step with no evaluable tensor is skipped (TensorUnavailableForStep). Parallel steps.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/rules/detail/activity.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// SaturatedActivation over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_saturated_activation : public rule<basic_saturated_activation<Storage>, Storage> {
    using base = rule<basic_saturated_activation<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "SaturatedActivation";
    static constexpr bool parallel_steps = true;

    /// The rule over `trial`, configured by `params`.
    explicit basic_saturated_activation(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params),
          selection_(detail::selection_from<Storage>(params, false, {".*tanh_input", ".*sigmoid_input"})),
          tanh_(params.get("threshold_tanh", number_pair{-9.4999, 9.4999})),
          sigmoid_(params.get("threshold_sigmoid", number_pair{-23.0, 16.99999})),
          threshold_inactivity_(params.get("threshold_inactivity", 1.0)),
          threshold_layer_(params.get("threshold_layer", 50.0)) {}

    /// True when some tanh or sigmoid layer at `step` has too many saturated units.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        return detail::any_tensor(selection_.names(this->base_trial()), step, this->name(),
                                  [&](const std::string& name) -> std::optional<bool> {
                                      const bool sigmoid = name.find("sigmoid") != std::string::npos;
                                      if (!sigmoid && name.find("tanh") == std::string::npos) {
                                          return std::nullopt;
                                      }
                                      const tensor_value v = this->value(name, step);
                                      if (!is_real_valued(v.type()) || v.size() == 0) {
                                          return std::nullopt;
                                      }
                                      const number_pair range = sigmoid ? sigmoid_ : tanh_;
                                      const double saturated = detail::inactive_unit_percent(
                                          v, threshold_inactivity_,
                                          [&](double x) { return x > range.first && x < range.second; });
                                      if (saturated > threshold_layer_) {
                                          this->set_reason(std::to_string(saturated) + "% of the units of " + name +
                                                           " are saturated");
                                          return true;
                                      }
                                      return false;
                                  });
    }

private:
    detail::tensor_selection<Storage> selection_;
    number_pair tanh_;
    number_pair sigmoid_;
    double threshold_inactivity_;
    double threshold_layer_;
};

/// SaturatedActivation over local runs.
using saturated_activation = basic_saturated_activation<>;

} // namespace tdbg::rules
