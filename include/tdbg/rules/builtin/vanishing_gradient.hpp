#pragma once
/// \file
/// VanishingGradient: met at a step when, for some tensor of the "gradients"
/// collection, the mean of the absolute values is below `threshold`.
///
/// Parameters (AWS's published defaults): `threshold` (float, 1e-07).
/// The mean comes from Tensor.reduction_value(step, abs mean): the stored
/// abs_mean reduction when the hook saved one, else computed from the raw
/// value. A gradient without either at this step is not evaluated; a step
/// where no gradient can be is skipped (TensorUnavailableForStep). Steps are
/// independent: evaluated in parallel.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/core/reduction.hpp"
#include "tdbg/rules/detail/selection.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"
#include "tdbg/storage/local_storage.hpp"

namespace tdbg::rules {

/// VanishingGradient over runs in `Storage` (see the file comment).
template <class Storage = local_storage>
class basic_vanishing_gradient : public rule<basic_vanishing_gradient<Storage>, Storage> {
    using base = rule<basic_vanishing_gradient<Storage>, Storage>;

public:
    using typename base::trial_type;
    static constexpr std::string_view rule_name = "VanishingGradient";
    static constexpr bool parallel_steps = true;

    /// The rule over `trial`, configured by `params`.
    explicit basic_vanishing_gradient(trial_type trial, const rule_params& params = rule_params())
        : base(std::move(trial), params), threshold_(params.get("threshold", 1e-07)) {}

    /// True when some gradient's mean |value| at `step` is below the threshold.
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        const auto gradients = gradients_.snapshot(this->base_trial());
        return detail::any_tensor_index(gradients->names.size(), step, this->name(),
                                        [&](std::size_t i) -> std::optional<bool> {
                                            // The stored reduction when the hook saved one, else computed from the value.
                                            const double mean = scalar_of(gradients->handles[i].reduction_value(step, abs_mean));
                                            if (mean < threshold_) {
                                                this->set_reason("mean |" + gradients->names[i] +
                                                                 "| = " + std::to_string(mean) + " < " +
                                                                 std::to_string(threshold_));
                                                return true;
                                            }
                                            return false;
                                        });
    }

private:
    static constexpr reduction abs_mean{reduction_kind::mean, true};

    double threshold_;
    detail::tensor_selection<Storage> gradients_{{"gradients"}, {}, false};
};

/// VanishingGradient over local runs.
using vanishing_gradient = basic_vanishing_gradient<>;

} // namespace tdbg::rules
