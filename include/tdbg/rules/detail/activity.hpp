#pragma once
/// \file
/// Helpers for the activation rules (DeadRelu, SaturatedActivation) and the
/// classification rules: units of a batch, their activity, class ids.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tdbg/config.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules::detail {

/// The percentage of units of `v` whose activity is below `threshold_inactivity`
/// percent. With two or more dimensions the first is the batch and each unit
/// is one position of the others: its activity is the percentage of samples
/// for which `active(x)` holds. A value with fewer dimensions is one sample.
template <class Active>
double inactive_unit_percent(const tensor_value& v, double threshold_inactivity, Active active) {
    const std::vector<double> x = to_doubles(v);
    if (x.empty()) {
        return 0.0;
    }
    const std::size_t batch = v.shape().size() >= 2 ? std::max<std::size_t>(v.shape()[0], 1) : 1;
    const std::size_t units = x.size() / batch;
    if (units == 0) {
        return 0.0;
    }
    std::size_t inactive = 0;
    for (std::size_t u = 0; u < units; ++u) {
        std::size_t count = 0;
        for (std::size_t b = 0; b < batch; ++b) {
            count += active(x[b * units + u]) ? 1 : 0;
        }
        const double activity = 100.0 * static_cast<double>(count) / static_cast<double>(batch);
        inactive += activity < threshold_inactivity ? 1 : 0;
    }
    return 100.0 * static_cast<double>(inactive) / static_cast<double>(units);
}

/// Class ids from a labels or predictions tensor: with `argmax` and two or
/// more dimensions, the index of the largest entry of each row (the last
/// axis); otherwise every element rounded to the nearest integer.
TDBG_DECL std::vector<std::int64_t> class_ids(const tensor_value& v, bool argmax);

} // namespace tdbg::rules::detail

#if TDBG_HEADER_ONLY
#include "tdbg/rules/detail/impl/activity.ipp"
#endif
