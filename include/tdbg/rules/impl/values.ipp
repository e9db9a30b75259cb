#pragma once
/// \file
/// Definitions of tdbg/rules/values.hpp.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/core.h>

#include "tdbg/core/half.hpp"
#include "tdbg/rules/values.hpp"

namespace tdbg::rules {

namespace detail {

TDBG_DECL void require_real(const tensor_value& v) {
    if (is_complex(v.type())) {
        throw dtype_mismatch(fmt::format("expected real numbers, got a {} tensor", dtype_name(v.type())));
    }
}

// numpy's isclose for one pair, in precision P (float32 arrays compare in float32, as numpy does).
template <class P>
bool close_one(P x, P y, double rtol, double atol, bool equal_nan) noexcept {
    if (std::isfinite(x) && std::isfinite(y)) {
        const P diff = std::fabs(x - y);
        const P tol = static_cast<P>(atol) + static_cast<P>(rtol) * std::fabs(y);
        return diff <= tol;
    }
    if (equal_nan && std::isnan(x) && std::isnan(y)) {
        return true;
    }
    return x == y;
}

inline bool close_half(float x, float y, double rtol, double atol, bool equal_nan) noexcept {
    // numpy computes float16 arrays in float16: every operation rounds to half.
    auto h = [](float f) { return float16(f).value(); };
    if (std::isfinite(x) && std::isfinite(y)) {
        const float diff = h(std::fabs(h(x - y)));
        const float tol = h(h(static_cast<float>(atol)) + h(h(static_cast<float>(rtol)) * std::fabs(y)));
        return diff <= tol;
    }
    if (equal_nan && std::isnan(x) && std::isnan(y)) {
        return true;
    }
    return x == y;
}

} // namespace detail

TDBG_DECL std::vector<double> to_doubles(const tensor_value& v) {
    std::vector<double> out;
    out.reserve(v.size());
    for_each_real(v, [&](double x) { out.push_back(x); });
    return out;
}

TDBG_DECL double scalar_of(const tensor_value& v) {
    if (v.size() != 1) {
        throw dtype_mismatch(fmt::format("expected a single value, got a tensor of {} elements", v.size()));
    }
    double out = 0;
    for_each_real(v, [&](double x) { out = x; });
    return out;
}

TDBG_DECL std::size_t count_zeros(const tensor_value& v) {
    std::size_t zeros = 0;
    visit_elements(v, [&](const auto* data, std::size_t n) {
        using T = std::decay_t<decltype(*data)>;
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (is_complex_element_v<T>) {
                zeros += data[i] == T{} ? 1 : 0;
            } else {
                zeros += as_double(data[i]) == 0.0 ? 1 : 0;
            }
        }
    });
    return zeros;
}

TDBG_DECL bool has_non_finite(const tensor_value& v, bool only_nan) {
    if (!is_floating(v.type()) && !is_complex(v.type())) {
        return false;
    }
    bool found = false;
    visit_elements(v, [&](const auto* data, std::size_t n) {
        using T = std::decay_t<decltype(*data)>;
        auto bad = [&](double x) { return only_nan ? std::isnan(x) : !std::isfinite(x); };
        for (std::size_t i = 0; i < n && !found; ++i) {
            if constexpr (is_complex_element_v<T>) {
                found = bad(static_cast<double>(data[i].real())) || bad(static_cast<double>(data[i].imag()));
            } else if constexpr (std::is_floating_point_v<T> || is_half_element_v<T>) {
                found = bad(as_double(data[i]));
            }
        }
    });
    return found;
}

TDBG_DECL double l2_norm(const tensor_value& v) {
    double sum = 0;
    visit_elements(v, [&](const auto* data, std::size_t n) {
        using T = std::decay_t<decltype(*data)>;
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (is_complex_element_v<T>) {
                sum += std::norm(std::complex<double>(data[i]));
            } else {
                const double x = as_double(data[i]);
                sum += x * x;
            }
        }
    });
    return std::sqrt(sum);
}

TDBG_DECL double l2_distance(const tensor_value& a, const tensor_value& b) {
    if (a.size() != b.size()) {
        throw dtype_mismatch(fmt::format("cannot subtract tensors of {} and {} elements", a.size(), b.size()));
    }
    const std::vector<double> x = to_doubles(a);
    const std::vector<double> y = to_doubles(b);
    double sum = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double d = x[i] - y[i];
        sum += d * d;
    }
    return std::sqrt(sum);
}

TDBG_DECL double percentile(std::vector<double> values, double q) {
    if (values.empty()) {
        return std::nan("");
    }
    std::sort(values.begin(), values.end());
    const double pos = (q / 100.0) * static_cast<double>(values.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(pos));
    const std::size_t above = std::min(below + 1, values.size() - 1);
    const double frac = pos - static_cast<double>(below);
    return values[below] + (values[above] - values[below]) * frac;
}

TDBG_DECL bool allclose(const tensor_value& a, const tensor_value& b, double rtol, double atol, bool equal_nan) {
    if (a.shape() != b.shape()) {
        return false;
    }
    if (a.type() == dtype::string || b.type() == dtype::string) {
        if (a.type() != b.type()) {
            return false;
        }
        const string_view_list x = a.string_views();
        const string_view_list y = b.string_views();
        return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin());
    }
    const std::size_t n = a.size();
    if (is_complex(a.type()) || is_complex(b.type())) {
        auto as_complex = [](const tensor_value& v) {
            std::vector<std::complex<double>> out;
            out.reserve(v.size());
            visit_elements(v, [&](const auto* data, std::size_t count) {
                using T = std::decay_t<decltype(*data)>;
                for (std::size_t i = 0; i < count; ++i) {
                    if constexpr (is_complex_element_v<T>) {
                        out.emplace_back(data[i]);
                    } else {
                        out.emplace_back(as_double(data[i]), 0.0);
                    }
                }
            });
            return out;
        };
        const auto x = as_complex(a);
        const auto y = as_complex(b);
        for (std::size_t i = 0; i < n; ++i) {
            const bool finite = std::isfinite(x[i].real()) && std::isfinite(x[i].imag()) && std::isfinite(y[i].real()) &&
                                std::isfinite(y[i].imag());
            bool close = false;
            if (finite) {
                close = std::abs(x[i] - y[i]) <= atol + rtol * std::abs(y[i]);
            } else if (equal_nan && (std::isnan(x[i].real()) || std::isnan(x[i].imag())) &&
                       (std::isnan(y[i].real()) || std::isnan(y[i].imag()))) {
                close = true;
            } else {
                close = x[i] == y[i];
            }
            if (!close) {
                return false;
            }
        }
        return true;
    }
    const bool zero_d = a.shape().empty();
    if (!zero_d && a.type() == b.type() && a.type() == dtype::float32) {
        const auto* x = a.data_as<float>();
        const auto* y = b.data_as<float>();
        for (std::size_t i = 0; i < n; ++i) {
            if (!detail::close_one<float>(x[i], y[i], rtol, atol, equal_nan)) {
                return false;
            }
        }
        return true;
    }
    if (!zero_d && a.type() == b.type() && a.type() == dtype::float16) {
        const auto* x = a.data_as<float16>();
        const auto* y = b.data_as<float16>();
        for (std::size_t i = 0; i < n; ++i) {
            if (!detail::close_half(x[i].value(), y[i].value(), rtol, atol, equal_nan)) {
                return false;
            }
        }
        return true;
    }
    const std::vector<double> x = to_doubles(a);
    const std::vector<double> y = to_doubles(b);
    for (std::size_t i = 0; i < n; ++i) {
        if (!detail::close_one<double>(x[i], y[i], rtol, atol, equal_nan)) {
            return false;
        }
    }
    return true;
}

} // namespace tdbg::rules
