#pragma once
/// \file
/// Definitions of tdbg/rules/builtin/vanishing_gradient.hpp.

#include <optional>
#include <utility>

#include <fmt/core.h>

#include "tdbg/core/reduction.hpp"
#include "tdbg/rules/builtin/vanishing_gradient.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

TDBG_DECL vanishing_gradient::vanishing_gradient(trial base, const rule_params& params)
    : rule(std::move(base), params), threshold_(params.get("threshold", 1e-07, non_negative)) {}

TDBG_DECL verdict vanishing_gradient::invoke_at_step(std::int64_t step) const {
    static constexpr reduction abs_mean{reduction_kind::mean, true};
    const auto gradients = gradients_.snapshot(base_trial());
    return detail::any_tensor_index(gradients->names.size(), step, name(), [&](std::size_t i) -> std::optional<verdict> {
        // The stored reduction when the hook saved one, else computed from the value.
        const double mean = scalar_of(gradients->handles[i].reduction_value(step, abs_mean));
        if (mean < threshold_) {
            return condition_met(fmt::format("mean |{}| = {:.6g} < {:g}", gradients->names[i], mean, threshold_));
        }
        return verdict(false);
    });
}

} // namespace tdbg::rules
