#pragma once
/// \file
/// Definitions of tdbg/rules/detail/activity.hpp.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tdbg/rules/detail/activity.hpp"

namespace tdbg::rules::detail {

TDBG_DECL std::vector<std::int64_t> class_ids(const tensor_value& v, bool argmax) {
    const std::vector<double> x = to_doubles(v);
    std::vector<std::int64_t> out;
    if (argmax && v.shape().size() >= 2 && v.shape().back() > 0) {
        const std::size_t width = v.shape().back();
        for (std::size_t row = 0; row + width <= x.size(); row += width) {
            const auto first = x.begin() + static_cast<std::ptrdiff_t>(row);
            out.push_back(static_cast<std::int64_t>(std::max_element(first, first + static_cast<std::ptrdiff_t>(width)) - first));
        }
        return out;
    }
    out.reserve(x.size());
    for (double d : x) {
        out.push_back(std::isfinite(d) ? static_cast<std::int64_t>(std::llround(d)) : -1);
    }
    return out;
}

} // namespace tdbg::rules::detail
