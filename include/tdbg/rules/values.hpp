#pragma once
/// \file
/// Small numeric helpers rules use on tensor values: a value as a scalar or
/// as doubles, counts, non-finite checks, norms, percentiles, and numpy's
/// `allclose` with numpy's precision (float32 arrays compared in float32).

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/tensor_value.hpp"

namespace tdbg::rules {

namespace detail {

template <class T>
constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

template <class T>
struct is_complex_type : std::false_type {};
template <class T>
struct is_complex_type<std::complex<T>> : std::true_type {};

template <class T>
double as_double(const T& x) noexcept {
    if constexpr (is_half_v<T>) {
        return static_cast<double>(x.value());
    } else {
        return static_cast<double>(x);
    }
}

} // namespace detail

/// True for the dtypes whose elements are real numbers (booleans included).
[[nodiscard]] constexpr bool is_real_valued(dtype d) noexcept { return d != dtype::string && !is_complex(d); }

/// Calls `f(const T* data, std::size_t n)` with the elements in their own type
/// (float16/bfloat16 as tdbg's half types, bool as bool). Throws dtype_mismatch for strings.
template <class F>
void visit_elements(const tensor_value& v, F&& f) {
    if (v.type() == dtype::string) {
        throw dtype_mismatch("expected numbers, got a string tensor");
    }
    visit_dtype(v.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, std::string>) {
            f(v.data_as<T>(), v.size());
        }
    });
}

/// Calls `f(double)` for every element of a real-valued tensor (bool as 0/1).
/// Throws dtype_mismatch for strings and complex numbers.
template <class F>
void for_each_real(const tensor_value& v, F&& f) {
    if (is_complex(v.type())) {
        throw dtype_mismatch("expected real numbers, got a " + std::string(dtype_name(v.type())) + " tensor");
    }
    visit_elements(v, [&](const auto* data, std::size_t n) {
        using T = std::decay_t<decltype(*data)>;
        if constexpr (!detail::is_complex_type<T>::value) {
            for (std::size_t i = 0; i < n; ++i) {
                f(detail::as_double(data[i]));
            }
        }
    });
}

/// The elements of a real-valued tensor as doubles, C order.
[[nodiscard]] inline std::vector<double> to_doubles(const tensor_value& v) {
    std::vector<double> out;
    out.reserve(v.size());
    for_each_real(v, [&](double x) { out.push_back(x); });
    return out;
}

/// The single element of `v` as a double (a 0-d or one-element tensor of a
/// real dtype). Throws dtype_mismatch otherwise.
[[nodiscard]] inline double scalar_of(const tensor_value& v) {
    if (v.size() != 1) {
        throw dtype_mismatch("expected a single value, got a tensor of " + std::to_string(v.size()) + " elements");
    }
    double out = 0;
    for_each_real(v, [&](double x) { out = x; });
    return out;
}

/// The number of elements equal to zero (false for booleans; 0+0i for complex).
[[nodiscard]] inline std::size_t count_zeros(const tensor_value& v) {
    std::size_t zeros = 0;
    visit_elements(v, [&](const auto* data, std::size_t n) {
        using T = std::decay_t<decltype(*data)>;
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (detail::is_complex_type<T>::value) {
                zeros += data[i] == T{} ? 1 : 0;
            } else {
                zeros += detail::as_double(data[i]) == 0.0 ? 1 : 0;
            }
        }
    });
    return zeros;
}

/// True when some element is NaN, or (unless `only_nan`) ±inf. Integers and booleans never are.
[[nodiscard]] inline bool has_non_finite(const tensor_value& v, bool only_nan = false) {
    if (!is_floating(v.type()) && !is_complex(v.type())) {
        return false;
    }
    bool found = false;
    visit_elements(v, [&](const auto* data, std::size_t n) {
        using T = std::decay_t<decltype(*data)>;
        auto bad = [&](double x) { return only_nan ? std::isnan(x) : !std::isfinite(x); };
        for (std::size_t i = 0; i < n && !found; ++i) {
            if constexpr (detail::is_complex_type<T>::value) {
                found = bad(static_cast<double>(data[i].real())) || bad(static_cast<double>(data[i].imag()));
            } else if constexpr (std::is_floating_point_v<T> || detail::is_half_v<T>) {
                found = bad(detail::as_double(data[i]));
            }
        }
    });
    return found;
}

/// The Euclidean norm of all elements (numpy.linalg.norm of the flattened value), in double.
[[nodiscard]] inline double l2_norm(const tensor_value& v) {
    double sum = 0;
    visit_elements(v, [&](const auto* data, std::size_t n) {
        using T = std::decay_t<decltype(*data)>;
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (detail::is_complex_type<T>::value) {
                sum += std::norm(std::complex<double>(data[i]));
            } else {
                const double x = detail::as_double(data[i]);
                sum += x * x;
            }
        }
    });
    return std::sqrt(sum);
}

/// The Euclidean norm of `a - b`, elementwise (same number of elements). Throws dtype_mismatch otherwise.
[[nodiscard]] inline double l2_distance(const tensor_value& a, const tensor_value& b) {
    if (a.size() != b.size()) {
        throw dtype_mismatch("cannot subtract tensors of " + std::to_string(a.size()) + " and " +
                             std::to_string(b.size()) + " elements");
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

/// numpy.percentile(values, q) with its default linear interpolation; NaN for no values.
[[nodiscard]] inline double percentile(std::vector<double> values, double q) {
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

namespace detail {

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

/// numpy.allclose(a, b, rtol, atol, equal_nan) for two values of the same
/// shape (a different shape or dtype kind is "not close"; strings compare
/// exactly). Precision follows numpy 1.x: float32 and float16 arrays (not 0-d)
/// compare in their own precision, everything else in double.
[[nodiscard]] inline bool allclose(const tensor_value& a, const tensor_value& b, double rtol = 1e-05, double atol = 1e-08,
                                   bool equal_nan = false) {
    if (a.shape() != b.shape()) {
        return false;
    }
    if (a.type() == dtype::string || b.type() == dtype::string) {
        return a.type() == b.type() && a.strings() == b.strings();
    }
    const std::size_t n = a.size();
    if (is_complex(a.type()) || is_complex(b.type())) {
        auto as_complex = [](const tensor_value& v) {
            std::vector<std::complex<double>> out;
            out.reserve(v.size());
            visit_elements(v, [&](const auto* data, std::size_t count) {
                using T = std::decay_t<decltype(*data)>;
                for (std::size_t i = 0; i < count; ++i) {
                    if constexpr (detail::is_complex_type<T>::value) {
                        out.emplace_back(data[i]);
                    } else {
                        out.emplace_back(detail::as_double(data[i]), 0.0);
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
