#pragma once
/// \file
/// The arithmetic of tdbg::cuda's reduction kernel, shared by the device and the host: the
/// per-thread accumulator, the 16-bit float conversions and the order in which a block's
/// threads visit a chunk. The statistics a pass leaves and their merge are the CPU path's own
/// (`tensor_stats`, reduce/detail/real_stats.hpp). Compiled
/// by nvcc as `__host__ __device__` functions and by any C++17 compiler as plain inline
/// functions, with no CUDA header; the host replays the kernel with them (detail/host_pass.hpp).
///
/// A thread's values are accumulated like tdbg's CPU kernel accumulates a block
/// (reduce/detail/real_kernel.hpp): moments as plain sums of x - k, (x - k)², |x| - |k| and
/// (|x| - |k|)² shifted by k, the thread's first value. k is a sample of the values it shifts,
/// so the shifted sums stay small for offset data (1e8 + noise) and M2 = S2 - S1²/n keeps its
/// digits; threads, blocks and chunks then merge with Chan's formula. Σx, Σ|x| and Σx² are
/// plain sums. The product multiplies mantissas in [0.5, 1) and adds exponents (at most 257
/// values per thread, so the mantissa product never leaves double's normal range), and is
/// renormalised at every merge, as tdbg::detail::normalise_product does. Products that may
/// be fused are written with fma(); the kernel is compiled with contraction off, so the host
/// replay gives the device's bits.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tdbg/core/half.hpp"
#include "tdbg/cuda/stats.hpp"
#include "tdbg/reduce/detail/float_bits.hpp"

#if defined(__CUDA_ARCH__)
/// Unrolls the loop that follows in device code (the loops it marks have constant bounds), so
/// that the values loaded stay in registers.
#define TDBG_CUDA_UNROLL _Pragma("unroll")
#else
#define TDBG_CUDA_UNROLL
#endif

namespace tdbg::cuda::detail {

/// Threads per block of the kernel.
inline constexpr unsigned block_threads = 256;
/// Warps per block.
inline constexpr unsigned block_warps = block_threads / 32;
/// Elements per chunk: one block reduces one chunk of one tensor.
inline constexpr unsigned chunk_elements = 65536;
/// Bytes a thread loads at once where the tensor is 16-byte aligned (a group of elements).
inline constexpr unsigned group_bytes = 16;
/// Groups a thread loads before it accumulates them (loads in flight per thread).
inline constexpr unsigned groups_in_flight = 4;

using tdbg::detail::exponent_field;
using tdbg::detail::high_word;
using tdbg::detail::is_finite;
using tdbg::detail::merged;
using tdbg::detail::normalise_product;
using tdbg::detail::split_exponent;
using tdbg::detail::with_high_word;

/// |v| of a float or a double: std::fabs, which nvcc's headers also declare for the device.
template <class T>
TDBG_CUDA_HD inline T abs_value(T v) noexcept {
    return std::fabs(v);
}

/// a * b + c rounded once, on both sides.
TDBG_CUDA_HD inline double fused(double a, double b, double c) noexcept {
#if defined(__CUDA_ARCH__)
    return fma(a, b, c);
#else
    return std::fma(a, b, c);
#endif
}

/// IEEE binary16 bits to double, exactly (NaN payloads kept, not quieted).
[[nodiscard]] TDBG_CUDA_HD inline double float16_to_double(std::uint16_t h) noexcept {
    return tdbg::detail::widen_16bit_float<double, 5>(h);
}

/// bfloat16 bits (the upper half of a binary32) to double, exactly (NaN payloads kept).
[[nodiscard]] TDBG_CUDA_HD inline double bfloat16_to_double(std::uint16_t b) noexcept {
    return tdbg::detail::widen_16bit_float<double, 8>(b);
}

/// How the kernel reads one element type: `storage` is what memory holds, `compared` the type
/// min and max are kept in (float for float32: exact, and cheaper than double on a GPU).
struct float32_element {
    using storage = float;
    using compared = float;
    TDBG_CUDA_HD static double value(float x) noexcept { return static_cast<double>(x); }
    TDBG_CUDA_HD static float compare_value(float x, double /*value*/) noexcept { return x; }
};

struct float64_element {
    using storage = double;
    using compared = double;
    TDBG_CUDA_HD static double value(double x) noexcept { return x; }
    TDBG_CUDA_HD static double compare_value(double /*x*/, double value) noexcept { return value; }
};

struct float16_element {
    using storage = std::uint16_t;
    using compared = double;
    TDBG_CUDA_HD static double value(std::uint16_t x) noexcept { return float16_to_double(x); }
    TDBG_CUDA_HD static double compare_value(std::uint16_t /*x*/, double value) noexcept { return value; }
};

struct bfloat16_element {
    using storage = std::uint16_t;
    using compared = double;
    TDBG_CUDA_HD static double value(std::uint16_t x) noexcept { return bfloat16_to_double(x); }
    TDBG_CUDA_HD static double compare_value(std::uint16_t /*x*/, double value) noexcept { return value; }
};

/// Elements in a group of group_bytes.
template <class E>
inline constexpr unsigned group_width = group_bytes / sizeof(typename E::storage);

/// One thread's running statistics of element type E, shifted by its first value.
template <class E>
struct thread_accumulator {
    using compared = typename E::compared;

    double k = 0; ///< the shift: the first value, or 0 when that is not finite
    double abs_k = 0;
    double sum = 0; ///< Σx
    double abs_sum = 0; ///< Σ|x|
    double shifted_sum = 0; ///< Σ(x - k)
    double shifted_sq = 0; ///< Σ(x - k)²
    double abs_shifted_sum = 0; ///< Σ(|x| - |k|)
    double abs_shifted_sq = 0; ///< Σ(|x| - |k|)²
    double sum_sq = 0; ///< Σx²
    double prod = 1; ///< product of the mantissas
    compared min = static_cast<compared>(HUGE_VAL);
    compared max = static_cast<compared>(-HUGE_VAL);
    compared abs_min = static_cast<compared>(HUGE_VAL);
    int prod_exp = 0;
    unsigned count = 0;

    TDBG_CUDA_HD explicit thread_accumulator(typename E::storage first) noexcept {
        const double x = E::value(first);
        k = is_finite(x) ? x : 0.0;
        abs_k = abs_value(k);
    }

    TDBG_CUDA_HD void add(typename E::storage raw) noexcept {
        const double x = E::value(raw);
        const compared c = E::compare_value(raw, x);
        const double a = abs_value(x);
        const double d = x - k;
        shifted_sum += d;
        shifted_sq = fused(d, d, shifted_sq);
        const double ad = a - abs_k;
        abs_shifted_sum += ad;
        abs_shifted_sq = fused(ad, ad, abs_shifted_sq);
        sum += x;
        abs_sum += a;
        sum_sq = fused(x, x, sum_sq);
        // NaN compares false: min and max skip it (abs_sum records it).
        min = c < min ? c : min;
        max = c > max ? c : max;
        const compared ac = abs_value(c);
        abs_min = ac < abs_min ? ac : abs_min;
        const unsigned field = exponent_field(x);
        if (field != 0 && field != 0x7FFU) {
            // The common case, without a call: the mantissa in [0.5, 1) and the exponent.
            prod *= with_high_word(x, (high_word(x) & 0x800FFFFFU) | (1022U << 20U));
            prod_exp += static_cast<int>(field) - 1022;
        } else if (x == 0 || field == 0x7FFU) {
            prod *= x; // zeros, infinities and NaNs decide the product's value
        } else {
            int exponent = 0;
            prod *= split_exponent(x, exponent);
            prod_exp += exponent;
        }
        ++count;
    }

    /// The statistics of the values added (count >= 1).
    [[nodiscard]] TDBG_CUDA_HD tensor_stats result() const noexcept {
        tensor_stats st;
        const auto n = static_cast<double>(count);
        st.count = count;
        st.min = static_cast<double>(min);
        st.max = static_cast<double>(max);
        st.abs_min = static_cast<double>(abs_min);
        st.sum = sum;
        st.mean = k + shifted_sum / n;
        const double m2 = shifted_sq - shifted_sum * shifted_sum / n;
        st.m2 = m2 < 0 ? 0.0 : m2; // rounding can dip below 0; NaN stays NaN
        st.abs_sum = abs_sum;
        st.abs_mean = abs_k + abs_shifted_sum / n;
        const double abs_m2 = abs_shifted_sq - abs_shifted_sum * abs_shifted_sum / n;
        st.abs_m2 = abs_m2 < 0 ? 0.0 : abs_m2;
        st.sum_sq = sum_sq;
        st.prod = prod;
        st.prod_exp = static_cast<double>(prod_exp);
        normalise_product(st.prod, st.prod_exp);
        return st;
    }
};

/// Loads a group of group_width<E> elements: one 16-byte load on the device where `aligned`.
template <class E>
TDBG_CUDA_HD inline void load_group(const typename E::storage* p, bool aligned,
                                    typename E::storage (&out)[group_width<E>]) noexcept {
#if defined(__CUDA_ARCH__)
    if (aligned) {
        const uint4 v = __ldcs(reinterpret_cast<const uint4*>(p)); // read once: evict first
        memcpy(out, &v, sizeof v);
        return;
    }
    TDBG_CUDA_UNROLL
    for (unsigned i = 0; i < group_width<E>; ++i) {
        out[i] = __ldcs(p + i);
    }
#else
    (void)aligned;
    std::memcpy(out, p, sizeof out);
#endif
}

/// The statistics thread `thread` of a block leaves for a chunk of `length` elements
/// (length <= chunk_elements). The chunk is cut into groups of group_width<E> elements;
/// thread t takes groups t, t + block_threads, ... and, of the last length % width elements,
/// the t-th. `aligned`: the chunk starts on a 16-byte boundary (only how the device loads).
template <class E>
[[nodiscard]] TDBG_CUDA_HD tensor_stats thread_pass(const typename E::storage* chunk, unsigned length, unsigned thread,
                                                    bool aligned) noexcept {
    constexpr unsigned width = group_width<E>;
    constexpr unsigned stride = block_threads * groups_in_flight;
    const unsigned groups = length / width;
    const unsigned tail = length - groups * width;
    unsigned first = 0;
    if (thread < groups) {
        first = thread * width;
    } else if (thread < tail) {
        first = groups * width + thread;
    } else {
        return tensor_stats{};
    }
    thread_accumulator<E> acc(chunk[first]);
    for (unsigned g = thread; g < groups; g += stride) {
        // All loads first, so that groups_in_flight of them are in flight together.
        typename E::storage values[groups_in_flight][width];
        TDBG_CUDA_UNROLL
        for (unsigned u = 0; u < groups_in_flight; ++u) {
            const unsigned group = g + u * block_threads;
            if (group < groups) {
                load_group<E>(chunk + static_cast<std::size_t>(group) * width, aligned, values[u]);
            }
        }
        TDBG_CUDA_UNROLL
        for (unsigned u = 0; u < groups_in_flight; ++u) {
            if (g + u * block_threads < groups) {
                TDBG_CUDA_UNROLL
                for (unsigned i = 0; i < width; ++i) {
                    acc.add(values[u][i]);
                }
            }
        }
    }
    if (thread < tail) {
        acc.add(chunk[groups * width + thread]);
    }
    return acc.result();
}

/// The partials that thread `thread` of a tensor's last block merges, in order: chunks
/// [begin, end) of `chunks`, contiguous runs of ceil(chunks / block_threads).
struct partial_range {
    unsigned begin = 0;
    unsigned end = 0;
};

[[nodiscard]] TDBG_CUDA_HD inline partial_range partials_of(unsigned chunks, unsigned thread) noexcept {
    const unsigned per_thread = (chunks + block_threads - 1) / block_threads;
    const unsigned begin = thread * per_thread;
    const unsigned end = begin + per_thread;
    return {begin < chunks ? begin : chunks, end < chunks ? end : chunks};
}

} // namespace tdbg::cuda::detail
