#pragma once
/// \file
/// TensorBoard histograms of a tensor, bucketed as smdebug does (TensorFlow's
/// default buckets: 0 and ±1e-12 * 1.1^k up to 1e20, trimmed to the support).

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/event.hpp"

namespace tdbg::detail {

/// TensorFlow's default bucket edges, computed as smdebug's _get_default_bins does.
inline const std::vector<double>& default_histogram_edges() {
    static const std::vector<double> edges = [] {
        std::vector<double> positive;
        for (double v = 1e-12; v < 1e20; v *= 1.1) {
            positive.push_back(v);
        }
        std::vector<double> out;
        out.reserve(positive.size() * 2 + 1);
        for (auto it = positive.rbegin(); it != positive.rend(); ++it) {
            out.push_back(-*it);
        }
        out.push_back(0.0);
        out.insert(out.end(), positive.begin(), positive.end());
        return out;
    }();
    return edges;
}

/// The values of a real tensor as doubles; nullopt for bool, string and complex tensors.
inline std::optional<std::vector<double>> histogram_values(const tensor_value& value) {
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

/// smdebug's _make_histogram with the default edges (numpy.histogram counts
/// [edge_i, edge_i+1), the last bucket closed; values outside or NaN are not
/// counted). nullopt when smdebug writes nothing: no values, or none in range.
inline std::optional<format::histogram> make_histogram(const std::vector<double>& values) {
    if (values.empty()) {
        return std::nullopt;
    }
    const std::vector<double>& edges = default_histogram_edges();
    std::vector<double> counts(edges.size() - 1, 0.0);
    for (double x : values) {
        if (!(x >= edges.front() && x <= edges.back())) {
            continue;
        }
        auto it = std::upper_bound(edges.begin(), edges.end(), x);
        std::size_t bin = static_cast<std::size_t>(it - edges.begin());
        bin = bin == 0 ? 0 : bin - 1;
        bin = std::min(bin, counts.size() - 1); // x == last edge falls in the last bucket
        counts[bin] += 1.0;
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
    // TensorBoard only shows right edges: keep one empty bucket left of the support.
    if (first > 0) {
        h.bucket.assign(counts.begin() + static_cast<std::ptrdiff_t>(first - 1),
                        counts.begin() + static_cast<std::ptrdiff_t>(last + 1));
    } else {
        h.bucket.push_back(0.0);
        h.bucket.insert(h.bucket.end(), counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(last + 1));
    }
    h.bucket_limit.assign(edges.begin() + static_cast<std::ptrdiff_t>(first),
                          edges.begin() + static_cast<std::ptrdiff_t>(last + 2));
    h.min = values.front();
    h.max = values.front();
    bool nan = false;
    for (double x : values) {
        nan = nan || x != x;
        h.min = std::min(h.min, x);
        h.max = std::max(h.max, x);
        h.sum += x;
        h.sum_squares += x * x;
    }
    if (nan) { // numpy's min and max propagate NaN
        h.min = h.max = std::numeric_limits<double>::quiet_NaN();
    }
    h.num = static_cast<double>(values.size());
    return h;
}

} // namespace tdbg::detail
