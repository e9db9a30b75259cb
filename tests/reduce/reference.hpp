#pragma once
// Reference reductions for the tests: naive loops in long double (two-pass
// variance, sequential products), written from numpy's documented semantics
// and independent of the library's kernels.

#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"

namespace tdbg::test {

/// The 18 reductions, plain then abs_.
inline std::vector<reduction> all_18() {
    std::vector<reduction> out;
    for (const bool abs : {false, true}) {
        for (const reduction_kind k : all_reduction_kinds) {
            out.push_back(reduction{k, abs});
        }
    }
    return out;
}

// Element type traits (the library's; they are not what these references check).
template <class T>
inline constexpr bool is_half_type = is_half_element_v<T>;
template <class T>
inline constexpr bool is_complex_type = is_complex_element_v<T>;
template <class T>
inline constexpr bool is_float_type = std::is_floating_point_v<T> || is_half_type<T>;

/// numpy's result dtype of reduction r on input dtype T.
template <class T>
dtype expected_dtype(reduction r) {
    if constexpr (is_float_type<T>) {
        return dtype_v<T>;
    } else if constexpr (is_complex_type<T>) {
        const bool complex_result = !r.abs && (r.kind == reduction_kind::min || r.kind == reduction_kind::max ||
                                               r.kind == reduction_kind::sum || r.kind == reduction_kind::mean ||
                                               r.kind == reduction_kind::prod);
        if (complex_result) {
            return dtype_v<T>;
        }
        return std::is_same_v<T, std::complex<float>> ? dtype::float32 : dtype::float64;
    } else {
        switch (r.kind) {
        case reduction_kind::min:
        case reduction_kind::max: return dtype_v<T>;
        case reduction_kind::sum:
        case reduction_kind::prod:
            return std::is_unsigned_v<T> && !std::is_same_v<T, bool> ? dtype::uint64 : dtype::int64;
        default: return dtype::float64;
        }
    }
}

/// One element as long double.
template <class T>
long double to_ld(T x) {
    if constexpr (is_half_type<T>) {
        return x.value();
    } else if constexpr (std::is_same_v<T, bool>) {
        return x ? 1.0L : 0.0L;
    } else {
        return static_cast<long double>(x);
    }
}

/// numpy.absolute in the element's own type: the most negative integer maps to itself.
template <class T>
T numpy_absolute(T x) {
    if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) {
        return x;
    } else if constexpr (std::is_integral_v<T>) {
        if (x == std::numeric_limits<T>::min()) {
            return x;
        }
        return x < 0 ? static_cast<T>(-x) : x;
    } else if constexpr (is_half_type<T>) {
        return T(std::fabs(x.value()));
    } else {
        return std::fabs(x);
    }
}

/// An expected result: a value (real part / imaginary part) or "throws".
struct expected {
    dtype type = dtype::float64;
    bool throws = false;
    long double re = 0;
    long double im = 0;
};

inline long double nan_ld() { return std::numeric_limits<long double>::quiet_NaN(); }

/// Statistics of real values in long double: the reference for every family.
inline expected real_reference(const std::vector<long double>& y, reduction_kind k, dtype type) {
    expected e;
    e.type = type;
    const auto n = static_cast<long double>(y.size());
    bool any_nan = false;
    for (const long double v : y) {
        any_nan = any_nan || std::isnan(v);
    }
    switch (k) {
    case reduction_kind::min:
    case reduction_kind::max: {
        if (y.empty()) {
            e.throws = true;
            return e;
        }
        long double best = y[0];
        for (const long double v : y) {
            best = k == reduction_kind::min ? std::fmin(best, v) : std::fmax(best, v);
        }
        e.re = any_nan ? nan_ld() : best;
        return e;
    }
    case reduction_kind::sum:
    case reduction_kind::mean: {
        long double s = 0;
        for (const long double v : y) {
            s += v;
        }
        e.re = k == reduction_kind::sum ? s : (y.empty() ? nan_ld() : s / n);
        return e;
    }
    case reduction_kind::variance:
    case reduction_kind::std: {
        if (y.empty()) {
            e.re = nan_ld();
            return e;
        }
        long double s = 0;
        for (const long double v : y) {
            s += v;
        }
        const long double mean = s / n;
        long double m2 = 0;
        for (const long double v : y) {
            m2 += (v - mean) * (v - mean);
        }
        e.re = k == reduction_kind::variance ? m2 / n : std::sqrt(m2 / n);
        return e;
    }
    case reduction_kind::prod: {
        long double p = 1;
        for (const long double v : y) {
            p *= v;
        }
        e.re = p;
        return e;
    }
    case reduction_kind::l1:
    case reduction_kind::l2: {
        long double s = 0;
        for (const long double v : y) {
            s += k == reduction_kind::l1 ? std::fabs(v) : v * v;
        }
        e.re = k == reduction_kind::l1 ? s : std::sqrt(s);
        return e;
    }
    }
    return e;
}

/// The reference value of reduction r over v, with numpy's semantics.
template <class T>
expected reference(const std::vector<T>& v, reduction r) {
    const dtype type = expected_dtype<T>(r);
    if constexpr (is_complex_type<T>) {
        if (r.abs || is_norm(r.kind)) {
            std::vector<long double> a;
            for (const T& z : v) {
                a.push_back(std::hypot(static_cast<long double>(z.real()), static_cast<long double>(z.imag())));
            }
            return real_reference(a, r.kind, type);
        }
        expected e;
        e.type = type;
        const auto n = static_cast<long double>(v.size());
        std::complex<long double> sum(0, 0);
        std::complex<long double> prod(1, 0);
        for (const T& z : v) {
            const std::complex<long double> x(z.real(), z.imag());
            sum += x;
            prod = {prod.real() * x.real() - prod.imag() * x.imag(), prod.real() * x.imag() + prod.imag() * x.real()};
        }
        switch (r.kind) {
        case reduction_kind::min:
        case reduction_kind::max: {
            if (v.empty()) {
                e.throws = true;
                return e;
            }
            T best = v[0];
            for (const T& z : v) {
                if (std::isnan(z.real()) || std::isnan(z.imag())) {
                    best = z; // numpy returns the first NaN
                    break;
                }
                const bool less = z.real() < best.real() || (z.real() == best.real() && z.imag() < best.imag());
                const bool greater = z.real() > best.real() || (z.real() == best.real() && z.imag() > best.imag());
                if (r.kind == reduction_kind::min ? less : greater) {
                    best = z;
                }
            }
            e.re = best.real();
            e.im = best.imag();
            return e;
        }
        case reduction_kind::sum:
            e.re = sum.real();
            e.im = sum.imag();
            return e;
        case reduction_kind::mean:
            e.re = v.empty() ? nan_ld() : sum.real() / n;
            e.im = v.empty() ? nan_ld() : sum.imag() / n;
            return e;
        case reduction_kind::prod:
            e.re = prod.real();
            e.im = prod.imag();
            return e;
        case reduction_kind::variance:
        case reduction_kind::std: {
            if (v.empty()) {
                e.re = nan_ld();
                return e;
            }
            const std::complex<long double> mean = sum / n;
            long double m2 = 0;
            for (const T& z : v) {
                m2 += std::norm(std::complex<long double>(z.real(), z.imag()) - mean);
            }
            e.re = r.kind == reduction_kind::variance ? m2 / n : std::sqrt(m2 / n);
            return e;
        }
        default: return e;
        }
    } else if constexpr (is_float_type<T>) {
        std::vector<long double> y;
        for (const T& x : v) {
            y.push_back(to_ld(r.abs ? numpy_absolute(x) : x));
        }
        return real_reference(y, r.kind, type);
    } else {
        // Integers and bool: min/max in the type; sum/prod wrap modulo 2^64; the rest in floating point.
        std::vector<T> y;
        for (const T& x : v) {
            y.push_back(r.abs ? numpy_absolute(x) : x);
        }
        expected e;
        e.type = type;
        const bool is_signed = std::is_signed_v<T>;
        if (r.kind == reduction_kind::min || r.kind == reduction_kind::max) {
            if (y.empty()) {
                e.throws = true;
                return e;
            }
            T best = y[0];
            for (const T& x : y) {
                best = r.kind == reduction_kind::min ? (x < best ? x : best) : (x > best ? x : best);
            }
            e.re = to_ld(best);
            return e;
        }
        if (r.kind == reduction_kind::sum || r.kind == reduction_kind::prod) {
            std::uint64_t acc = r.kind == reduction_kind::sum ? 0 : 1;
            for (const T& x : y) {
                const auto bits = is_signed ? static_cast<std::uint64_t>(static_cast<std::int64_t>(x))
                                            : static_cast<std::uint64_t>(x);
                acc = r.kind == reduction_kind::sum ? acc + bits : acc * bits;
            }
            e.re = type == dtype::uint64 ? static_cast<long double>(acc)
                                         : static_cast<long double>(static_cast<std::int64_t>(acc));
            return e;
        }
        std::vector<long double> values;
        // numpy's norms convert to float first: |x| is the true absolute value there.
        const bool norm = is_norm(r.kind);
        for (std::size_t i = 0; i < v.size(); ++i) {
            values.push_back(norm ? to_ld(v[i]) : to_ld(y[i]));
        }
        return real_reference(values, r.kind, type);
    }
}

/// The value of a 0-d result as long double (real, imaginary).
inline std::pair<long double, long double> scalar_value(const tensor_value& t) {
    return visit_dtype(t.type(), [&](auto tag) -> std::pair<long double, long double> {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, std::string>) {
            FAIL("string result");
            return {0, 0};
        } else if constexpr (is_complex_type<T>) {
            const T z = t.data_as<T>()[0];
            return {z.real(), z.imag()};
        } else {
            return {to_ld(t.data_as<T>()[0]), 0};
        }
    });
}

/// Rounds a long double to dtype d (the value a correct result holds).
inline long double round_to(long double v, dtype d) {
    switch (d) {
    case dtype::float32:
    case dtype::complex64: return static_cast<float>(v);
    case dtype::float64:
    case dtype::complex128: return static_cast<double>(v);
    case dtype::float16: return float16(static_cast<float>(v)).value();
    case dtype::bfloat16: return bfloat16(static_cast<float>(v)).value();
    default: return v;
    }
}

/// Relative tolerance of results of dtype d: a couple of units in the last place.
inline long double tolerance(dtype d) {
    switch (d) {
    case dtype::float32:
    case dtype::complex64: return 2.5e-7L;
    case dtype::float16: return 2e-3L;
    case dtype::bfloat16: return 8e-3L;
    default: return 1e-11L;
    }
}

/// True when `got` equals the expected value: exactly for integer and bool
/// results, within `tolerance(dtype) * scale` otherwise (NaN matches NaN).
inline bool close(long double got, long double want, dtype d, long double scale) {
    if (std::isnan(want)) {
        return std::isnan(got);
    }
    if (is_integer(d) || d == dtype::boolean) {
        return got == want;
    }
    const long double rounded = round_to(want, d);
    if (std::isinf(rounded) || std::isinf(got)) {
        return got == rounded;
    }
    return std::fabs(got - rounded) <= tolerance(d) * std::max({std::fabs(rounded), std::fabs(got), scale}) +
                                           std::numeric_limits<float>::denorm_min();
}

/// Checks a computed 0-d result against the reference.
inline void check_result(const tensor_value& got, const expected& want, long double scale = 0) {
    CHECK(got.type() == want.type);
    CHECK(got.shape().empty());
    REQUIRE(got.size() == 1);
    const auto [re, im] = scalar_value(got);
    if (is_complex(want.type) && std::isfinite(want.re) && std::isfinite(want.im)) {
        scale = std::max(scale, std::hypot(want.re, want.im)); // both parts relative to |z|
    }
    INFO("got " << static_cast<double>(re) << " + " << static_cast<double>(im) << "i, expected "
                << static_cast<double>(want.re) << " + " << static_cast<double>(want.im) << "i");
    CHECK(close(re, want.re, got.type(), scale));
    CHECK(close(im, want.im, got.type(), scale));
}

/// Random test data for element type T (fixed seed): normal values for the
/// floating types, the whole range for the integer types.
template <class T>
std::vector<T> random_values(std::size_t n, std::uint32_t seed) {
    std::mt19937_64 gen(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<T> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        if constexpr (is_complex_type<T>) {
            using R = typename T::value_type;
            out.emplace_back(static_cast<R>(normal(gen)), static_cast<R>(normal(gen)));
        } else if constexpr (is_half_type<T>) {
            out.push_back(T(static_cast<float>(normal(gen))));
        } else if constexpr (std::is_floating_point_v<T>) {
            out.push_back(static_cast<T>(normal(gen)));
        } else if constexpr (std::is_same_v<T, bool>) {
            out.push_back((gen() & 1U) != 0);
        } else {
            std::uniform_int_distribution<long long> any(static_cast<long long>(std::numeric_limits<T>::lowest()),
                                                         static_cast<long long>(std::numeric_limits<T>::max() / 2));
            out.push_back(
                static_cast<T>(std::is_same_v<T, std::uint64_t> ? gen() : static_cast<std::uint64_t>(any(gen))));
        }
    }
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        if (n > 2) {
            out[n / 2] = std::numeric_limits<T>::min(); // numpy.absolute keeps it negative
        }
    }
    return out;
}

/// A tensor_value owning a copy of v (bool goes through std::vector<bool>).
template <class T>
tensor_value make_tensor(const std::vector<T>& v, tensor_value::shape_type shape) {
    if constexpr (std::is_same_v<T, bool>) {
        return tensor_value(std::vector<bool>(v.begin(), v.end()), std::move(shape));
    } else {
        return tensor_value(std::vector<T>(v), std::move(shape));
    }
}
template <class T>
tensor_value make_tensor(const std::vector<T>& v) {
    return make_tensor(v, tensor_value::shape_type{v.size()});
}

} // namespace tdbg::test
