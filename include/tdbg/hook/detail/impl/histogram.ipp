#pragma once
/// \file
/// Definitions of tdbg/hook/detail/histogram.hpp.

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include <fmt/core.h>

#include "tdbg/hook/detail/histogram.hpp"

namespace tdbg::detail {

TDBG_DECL double scalar_as_double(const tensor_value& value) {
    return visit_dtype(value.type(), [&](auto tag) -> double {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, std::string> || is_complex_element_v<T>) {
            return 0.0;
        } else {
            return as_double(value.data_as<T>()[0]);
        }
    });
}

TDBG_DECL std::optional<std::vector<double>> histogram_values(const tensor_value& value) {
    if (value.type() == dtype::boolean || value.type() == dtype::string || is_complex(value.type())) {
        return std::nullopt;
    }
    return visit_dtype(value.type(), [&](auto tag) -> std::optional<std::vector<double>> {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool> || is_complex_element_v<T>) {
            return std::nullopt;
        } else {
            const T* data = value.data_as<T>();
            std::vector<double> out(value.size());
            for (std::size_t i = 0; i < out.size(); ++i) {
                out[i] = as_double(data[i]);
            }
            return out;
        }
    });
}

TDBG_DECL std::optional<format::histogram> histogram_from_counts(const histogram_counts& in) {
    const std::vector<double>& edges = default_histogram_edges();
    const std::vector<double>& counts = in.counts;
    if (counts.size() + 1 != edges.size()) {
        throw error(fmt::format("a histogram has {} bucket counts where the edges make {} buckets", counts.size(),
                                edges.size() - 1));
    }
    std::size_t first = counts.size();
    std::size_t last = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        if (counts[i] > 0) {
            first = std::min(first, i);
            last = i;
        }
    }
    if (first == counts.size()) {
        return std::nullopt;
    }
    format::histogram h;
    if (first > 0) {
        h.bucket.assign(counts.begin() + static_cast<std::ptrdiff_t>(first - 1),
                        counts.begin() + static_cast<std::ptrdiff_t>(last + 1));
    } else {
        h.bucket.push_back(0.0);
        h.bucket.insert(h.bucket.end(), counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(last + 1));
    }
    h.bucket_limit.assign(edges.begin() + static_cast<std::ptrdiff_t>(first),
                          edges.begin() + static_cast<std::ptrdiff_t>(last + 2));
    h.min = in.min;
    h.max = in.max;
    h.sum = in.sum;
    h.sum_squares = in.sum_squares;
    h.num = in.num;
    return h;
}

TDBG_DECL histogram_counts count_histogram(const std::vector<double>& values) {
    const std::vector<double>& edges = default_histogram_edges();
    histogram_counts out;
    out.counts.assign(edges.size() - 1, 0.0);
    for (double x : values) {
        if (!(x >= edges.front() && x <= edges.back())) {
            continue;
        }
        auto it = std::upper_bound(edges.begin(), edges.end(), x);
        std::size_t bin = static_cast<std::size_t>(it - edges.begin());
        bin = bin == 0 ? 0 : bin - 1;
        bin = std::min(bin, out.counts.size() - 1); // x == last edge falls in the last bucket
        out.counts[bin] += 1.0;
    }
    if (!values.empty()) {
        out.min = values.front();
        out.max = values.front();
    }
    bool nan = false;
    for (double x : values) {
        nan = nan || x != x;
        out.min = std::min(out.min, x);
        out.max = std::max(out.max, x);
        out.sum += x;
        out.sum_squares += x * x;
    }
    if (nan) {
        out.min = out.max = std::numeric_limits<double>::quiet_NaN();
    }
    out.num = static_cast<double>(values.size());
    return out;
}

TDBG_DECL std::optional<format::histogram> make_histogram(const std::vector<double>& values) {
    if (values.empty()) {
        return std::nullopt;
    }
    return histogram_from_counts(count_histogram(values));
}

} // namespace tdbg::detail
