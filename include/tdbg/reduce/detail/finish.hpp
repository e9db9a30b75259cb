#pragma once
/// \file
/// From merged statistics to one reduction: a reduction_value of numpy's
/// result dtype (see reduce/compute.hpp for the table).

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/half.hpp"
#include "tdbg/core/reduction.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/reduce/detail/accumulate.hpp"
#include "tdbg/reduce/reduction_value.hpp"

namespace tdbg::detail {

[[noreturn]] inline void throw_empty(reduction r, dtype type) {
    throw error("reduction " + reduction_name(r) + " of an empty " + std::string(dtype_name(type)) +
                " tensor has no value (numpy raises ValueError for a zero-size array too)");
}

/// A double as an element of the floating dtype T (rounded once; out of range gives inf).
template <class T>
[[nodiscard]] reduction_value floating_value(double v) noexcept {
    if constexpr (std::is_same_v<T, double>) {
        return reduction_value::of(v);
    } else if constexpr (std::is_same_v<T, float>) {
        return reduction_value::of(static_cast<float>(v));
    } else {
        return reduction_value::of(T(static_cast<float>(v)));
    }
}

inline constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

/// Σ(x - mean)² / (count - ddof): numpy's variance with ddof 0, torch's default (unbiased) with 1;
/// NaN when count <= ddof (no values, or one value with ddof 1), as both libraries give.
[[nodiscard]] inline double variance_of(double m2, std::uint64_t count, unsigned ddof) noexcept {
    return count <= ddof ? nan_value : m2 / static_cast<double>(count - ddof);
}

/// Reduction r of floating-point input (float32, float64, float16, bfloat16): results keep the dtype.
template <class T>
[[nodiscard]] reduction_value finish_real(const real_stats& st, reduction r, unsigned ddof = 0) {
    const auto n = static_cast<double>(st.count);
    const bool empty = st.count == 0;
    switch (r.kind) {
    case reduction_kind::min:
        if (empty) {
            throw_empty(r, dtype_v<T>);
        }
        return floating_value<T>(st.saw_nan() ? nan_value : (r.abs ? st.abs_min : st.min));
    case reduction_kind::max:
        if (empty) {
            throw_empty(r, dtype_v<T>);
        }
        return floating_value<T>(st.saw_nan() ? nan_value
                                               : (r.abs ? std::max(std::fabs(st.min), std::fabs(st.max)) : st.max));
    case reduction_kind::mean: return floating_value<T>(empty ? nan_value : (r.abs ? st.abs_sum : st.sum) / n);
    case reduction_kind::sum: return floating_value<T>(r.abs ? st.abs_sum : st.sum);
    case reduction_kind::variance: return floating_value<T>(variance_of(r.abs ? st.abs_m2 : st.m2, st.count, ddof));
    case reduction_kind::std:
        return floating_value<T>(std::sqrt(variance_of(r.abs ? st.abs_m2 : st.m2, st.count, ddof)));
    case reduction_kind::prod: {
        const double v = product_value(st.prod, st.prod_exp);
        return floating_value<T>(r.abs ? std::fabs(v) : v);
    }
    case reduction_kind::l1: return floating_value<T>(st.abs_sum);
    case reduction_kind::l2: return floating_value<T>(std::sqrt(st.sum_sq));
    }
    throw error("unknown reduction kind");
}

/// Reduction r of integer or bool input, with numpy's result dtypes.
template <class T>
[[nodiscard]] reduction_value finish_integer(const integer_stats<T>& st, reduction r, unsigned ddof = 0) {
    // numpy.absolute is the identity on unsigned and bool values.
    const bool abs = r.abs && std::is_signed_v<T>;
    const auto n = static_cast<double>(st.count);
    const bool empty = st.count == 0;
    // Sums and products: int64 for signed and bool, uint64 for unsigned (numpy's promotion).
    const auto wide = [](std::uint64_t v) {
        if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
            return reduction_value::of(v);
        } else {
            return reduction_value::of(static_cast<std::int64_t>(v));
        }
    };
    const real_stats& moments = abs ? st.abs_real : st.real;
    switch (r.kind) {
    case reduction_kind::min:
        if (empty) {
            throw_empty(r, dtype_v<T>);
        }
        return reduction_value::of(abs ? st.abs_min : st.min);
    case reduction_kind::max:
        if (empty) {
            throw_empty(r, dtype_v<T>);
        }
        return reduction_value::of(abs ? st.abs_max : st.max);
    case reduction_kind::sum: return wide(abs ? st.abs_sum : st.sum);
    case reduction_kind::prod: return wide(abs ? st.abs_prod : st.prod);
    case reduction_kind::mean: return reduction_value::of(empty ? nan_value : moments.sum / n);
    case reduction_kind::variance: return reduction_value::of(variance_of(moments.m2, st.count, ddof));
    case reduction_kind::std: return reduction_value::of(std::sqrt(variance_of(moments.m2, st.count, ddof)));
    // numpy's norms convert to float64 first, so |x| never wraps there.
    case reduction_kind::l1: return reduction_value::of(st.real.abs_sum);
    case reduction_kind::l2: return reduction_value::of(std::sqrt(st.real.sum_sq));
    }
    throw error("unknown reduction kind");
}

/// Reduction r of complex input: complex results for min, max, sum, mean and
/// prod; real results (float32 for complex64) for the rest.
template <class C>
[[nodiscard]] reduction_value finish_complex(const complex_stats<C>& st, reduction r, unsigned ddof = 0) {
    using R = typename C::value_type;
    const auto n = static_cast<double>(st.count);
    const bool empty = st.count == 0;
    const auto complex_scalar = [](std::complex<double> v) {
        return reduction_value::of(C(static_cast<R>(v.real()), static_cast<R>(v.imag())));
    };
    if (r.abs || is_norm(r.kind)) {
        // The plain reductions of |z|.
        const real_stats& a = st.abs;
        switch (r.kind) {
        case reduction_kind::min:
        case reduction_kind::max:
            if (empty) {
                throw_empty(r, dtype_v<C>);
            }
            return floating_value<R>(a.saw_nan() ? nan_value : (r.kind == reduction_kind::min ? a.min : a.max));
        case reduction_kind::mean: return floating_value<R>(empty ? nan_value : a.abs_sum / n);
        case reduction_kind::sum:
        case reduction_kind::l1: return floating_value<R>(a.abs_sum);
        case reduction_kind::variance: return floating_value<R>(variance_of(a.m2, st.count, ddof));
        case reduction_kind::std: return floating_value<R>(std::sqrt(variance_of(a.m2, st.count, ddof)));
        case reduction_kind::prod: return floating_value<R>(product_value(a.prod, a.prod_exp));
        case reduction_kind::l2: return floating_value<R>(std::sqrt(a.sum_sq));
        }
        throw error("unknown reduction kind");
    }
    switch (r.kind) {
    case reduction_kind::min:
    case reduction_kind::max:
        if (empty) {
            throw_empty(r, dtype_v<C>);
        }
        if (st.saw_nan) {
            return reduction_value::of(st.first_nan);
        }
        return reduction_value::of(r.kind == reduction_kind::min ? st.min : st.max);
    case reduction_kind::sum: return complex_scalar(st.sum);
    case reduction_kind::mean: return complex_scalar(empty ? std::complex<double>(nan_value, nan_value) : st.sum / n);
    case reduction_kind::prod: return complex_scalar(st.prod);
    case reduction_kind::variance: return floating_value<R>(variance_of(st.m2, st.count, ddof));
    case reduction_kind::std: return floating_value<R>(std::sqrt(variance_of(st.m2, st.count, ddof)));
    case reduction_kind::l1:
    case reduction_kind::l2: break; // norms are handled with |z| above
    }
    throw error("unknown reduction kind");
}

/// Reduction r from the statistics of element type T.
template <class T>
[[nodiscard]] reduction_value finish(const stats_t<T>& st, reduction r, unsigned ddof = 0) {
    if constexpr (is_real_v<T>) {
        return finish_real<T>(st, r, ddof);
    } else if constexpr (is_complex_v<T>) {
        return finish_complex<T>(st, r, ddof);
    } else {
        return finish_integer<T>(st, r, ddof);
    }
}

} // namespace tdbg::detail
