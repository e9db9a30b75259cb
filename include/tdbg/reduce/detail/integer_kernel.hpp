#pragma once
/// \file
/// Integer and bool input, as numpy reduces it: min/max in the input type,
/// sum/prod in 64 bits with wrap-around, mean/std/variance and the norms in
/// float64 (each block is converted to double on the stack and goes through
/// the real kernel), and the abs_ forms over numpy.absolute(x), which wraps
/// the most negative value (numpy.absolute(int8(-128)) is -128).

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tdbg/reduce/detail/needs.hpp"
#include "tdbg/reduce/detail/real_kernel.hpp"
#include "tdbg/reduce/detail/real_stats.hpp"

namespace tdbg::detail {

/// numpy.absolute in the input type: two's complement, so the most negative value stays as it is.
template <class T>
[[nodiscard]] constexpr T numpy_abs(T x) noexcept {
    if constexpr (std::is_signed_v<T>) {
        using unsigned_type = std::make_unsigned_t<T>;
        return x < 0 ? static_cast<T>(static_cast<unsigned_type>(unsigned_type{0} - static_cast<unsigned_type>(x))) : x;
    } else {
        return x;
    }
}

/// x as a 64-bit two's complement pattern (sign-extended), for wrapping sums and products.
template <class T>
[[nodiscard]] constexpr std::uint64_t wrap64(T x) noexcept {
    if constexpr (std::is_signed_v<T>) {
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(x));
    } else {
        return static_cast<std::uint64_t>(x);
    }
}

/// What the integer kernel accumulates over a run of values.
template <class T>
struct integer_stats {
    std::uint64_t count = 0;
    T min = std::numeric_limits<T>::max();
    T max = std::numeric_limits<T>::lowest();
    T abs_min = std::numeric_limits<T>::max();
    T abs_max = std::numeric_limits<T>::lowest();
    std::uint64_t sum = 0; ///< mod 2^64, as numpy's int64/uint64 sum
    std::uint64_t prod = 1;
    std::uint64_t abs_sum = 0;
    std::uint64_t abs_prod = 1;
    real_stats real; ///< of x as float64
    real_stats abs_real; ///< of numpy.absolute(x) as float64

    /// Adds the statistics of the values that follow these.
    void merge(const integer_stats& o) noexcept {
        merge_counted(*this, o, [&](double /*n_a*/, double /*n_b*/) {
            min = o.min < min ? o.min : min;
            max = o.max > max ? o.max : max;
            abs_min = o.abs_min < abs_min ? o.abs_min : abs_min;
            abs_max = o.abs_max > abs_max ? o.abs_max : abs_max;
            sum += o.sum;
            prod *= o.prod;
            abs_sum += o.abs_sum;
            abs_prod *= o.abs_prod;
            real.merge(o.real);
            abs_real.merge(o.abs_real);
        });
    }
};

/// The real kernel in one of the presets of integer input (see integer_real_preset).
[[nodiscard]] inline real_stats integer_real_block(const double* p, std::size_t n, unsigned preset,
                                                   simd_level level) noexcept {
    return preset == integer_moments_preset ? real_block<integer_moments_preset>(p, n, level)
                                            : real_block<integer_all_preset>(p, n, level);
}

/// Statistics of n >= 1 integer values of a block (n <= block_size): the
/// integer accumulators `Int`, and the real kernel over x and over
/// numpy.absolute(x) in the presets `real` and `abs_real` (0: not needed).
template <unsigned Int, class T>
[[nodiscard]] integer_stats<T> integer_block(const T* p, std::size_t n, simd_level level, unsigned real,
                                             unsigned abs_real) noexcept {
    integer_stats<T> st;
    st.count = n;
    if constexpr ((Int & (need_int_min_max | need_int_abs_min_max)) != 0) {
        T mn = st.min;
        T mx = st.max;
        T amn = st.abs_min;
        T amx = st.abs_max;
        for (std::size_t i = 0; i < n; ++i) {
            const T x = p[i];
            if constexpr ((Int & need_int_min_max) != 0) {
                mn = x < mn ? x : mn;
                mx = x > mx ? x : mx;
            }
            if constexpr ((Int & need_int_abs_min_max) != 0) {
                const T a = numpy_abs(x);
                amn = a < amn ? a : amn;
                amx = a > amx ? a : amx;
            }
        }
        st.min = mn;
        st.max = mx;
        st.abs_min = amn;
        st.abs_max = amx;
    }
    if constexpr ((Int & (need_int_sum | need_int_abs_sum)) != 0) {
        std::uint64_t s = 0;
        std::uint64_t as = 0;
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr ((Int & need_int_sum) != 0) {
                s += wrap64(p[i]);
            }
            if constexpr ((Int & need_int_abs_sum) != 0) {
                as += wrap64(numpy_abs(p[i]));
            }
        }
        st.sum = s;
        st.abs_sum = as;
    }
    if constexpr ((Int & (need_int_prod | need_int_abs_prod)) != 0) {
        // Products mod 2^64 do not depend on the order: four chains for throughput.
        std::uint64_t pr[4] = {1, 1, 1, 1};
        std::uint64_t apr[4] = {1, 1, 1, 1};
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr ((Int & need_int_prod) != 0) {
                pr[i % 4] *= wrap64(p[i]);
            }
            if constexpr ((Int & need_int_abs_prod) != 0) {
                apr[i % 4] *= wrap64(numpy_abs(p[i]));
            }
        }
        st.prod = (pr[0] * pr[1]) * (pr[2] * pr[3]);
        st.abs_prod = (apr[0] * apr[1]) * (apr[2] * apr[3]);
    }
    if (real != 0) {
        st.real = converted_block<double>(
            p, n, [](T x) { return static_cast<double>(x); },
            [&](const double* values, std::size_t m) { return integer_real_block(values, m, real, level); });
    }
    if (abs_real != 0) {
        st.abs_real = converted_block<double>(
            p, n, [](T x) { return static_cast<double>(numpy_abs(x)); },
            [&](const double* values, std::size_t m) { return integer_real_block(values, m, abs_real, level); });
    }
    return st;
}

} // namespace tdbg::detail
