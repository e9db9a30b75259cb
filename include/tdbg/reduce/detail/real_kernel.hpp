#pragma once
/// \file
/// The fused kernel: one pass over a block of float or double values computes
/// every accumulator a reduction set needs, in four double lanes.
///
/// Moments are plain sums of x - k, (x - k)², |x| - |k| and (|x| - |k|)² with
/// k the block's first element: k is a sample of the block, so the shifted
/// sums stay small for offset data (1e8 + noise) and the block's mean and M2
/// (M2 = S2 - S1²/n) keep their digits. Blocks then merge with Chan's formula.
/// For float input x - k is exact in double, so Σx = n·k + Σ(x - k) loses
/// nothing; double input rounds there, so its Σx and Σ|x| (sum, mean, l1) are
/// also accumulated unshifted.
///
/// Products: float input multiplies in double lanes and rescales by 2^±512 every
/// 3 products, so no lane over- or underflows before the true product does.
/// Double input multiplies mantissas in [1, 2) and adds exponents in integer
/// lanes; zeros, infinities, NaNs and subnormals are recognised from the
/// block's min/max accumulators.

#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tdbg/reduce/detail/lanes.hpp"
#include "tdbg/reduce/detail/needs.hpp"
#include "tdbg/reduce/detail/real_stats.hpp"

namespace tdbg::detail {

/// Adds four lanes in a fixed order (the same in every build).
TDBG_REDUCE_INLINE double lane_sum(const double (&v)[lane_count]) noexcept { return (v[0] + v[1]) + (v[2] + v[3]); }

/// The exact product of a block of doubles, element by element (the rare
/// fallback for blocks with subnormal values).
inline void exact_product(const double* p, std::size_t n, double& prod, double& prod_exp) noexcept {
    prod = 1;
    prod_exp = 0;
    for (std::size_t i = 0; i < n; ++i) {
        int e = 0;
        const double m = std::frexp(p[i], &e);
        prod *= m;
        prod_exp += e;
        normalise_product(prod, prod_exp);
    }
}

/// Adds the lanes `x` to one stream's moments (of x or of |x|) shifted by `k` (see the file
/// comment): Σ(x - k) to `s1`, Σ(x - k)² to `s2` when `Squares`, and Σx to `raw` when `Raw`.
template <class L, bool Raw, bool Squares>
TDBG_REDUCE_INLINE void add_moments(const typename L::vec& x, const typename L::vec& k, typename L::vec& raw,
                                    typename L::vec& s1, typename L::vec& s2) noexcept {
    if constexpr (Raw) {
        raw = L::add(raw, x);
    }
    const typename L::vec d = L::sub(x, k);
    s1 = L::add(s1, d);
    if constexpr (Squares) {
        s2 = L::add(s2, L::mul(d, d));
    }
}

/// Statistics of n >= 1 values of a block (n <= block_size) with the lanes L. One function on
/// purpose (~220 lines): the pass is one loop whose accumulators, chosen at compile time by
/// `Needs`, stay in registers; its set-up, loop and lane merge split into functions would pass
/// them through memory.
template <unsigned Needs, class L, class T>
TDBG_REDUCE_INLINE real_stats block_stats(const T* p, std::size_t n) noexcept {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "block_stats: float or double input");
    using vec = typename L::vec;
    constexpr bool is_float = std::is_same_v<T, float>;
    constexpr bool moments = (Needs & (need_sum | need_m2)) != 0;
    constexpr bool abs_moments = (Needs & (need_abs_sum | need_abs_m2)) != 0;
    constexpr bool any_abs = abs_moments || (Needs & need_abs_min) != 0;
    constexpr bool raw_sums = !is_float; // unshifted Σx and Σ|x| (see the file comment)
    constexpr std::size_t group = is_float ? 3 : 1; // products between renormalisations (float input)
    constexpr std::size_t step = lane_count * group;
    constexpr double inf = std::numeric_limits<double>::infinity();

    const auto first = static_cast<double>(p[0]);
    const double k = std::isfinite(first) ? first : 0.0;
    const double ka = std::fabs(k);
    const vec vk = L::splat(k);
    const vec vka = L::splat(ka);
    vec s1 = L::splat(0.0);
    vec s2 = s1;
    vec as1 = s1;
    vec as2 = s1;
    vec q = s1;
    vec r1 = s1;
    vec ar1 = s1;
    vec mn = L::splat(inf);
    vec mx = L::splat(-inf);
    vec amn = mn;
    vec pm = L::splat(1.0);
    vec pe = s1;
    auto pei = L::izero();

    std::size_t i = 0;
    for (; i + step <= n; i += step) {
        for (std::size_t g = 0; g < group; ++g) {
            const vec x = L::load(p + i + g * lane_count);
            if constexpr (moments) {
                add_moments<L, raw_sums, (Needs & need_m2) != 0>(x, vk, r1, s1, s2);
            }
            if constexpr (any_abs) {
                const vec a = L::abs(x);
                if constexpr (abs_moments) {
                    add_moments<L, raw_sums, (Needs & need_abs_m2) != 0>(a, vka, ar1, as1, as2);
                }
                if constexpr ((Needs & need_abs_min) != 0) {
                    amn = L::min(a, amn);
                }
            }
            if constexpr ((Needs & need_sum_sq) != 0) {
                q = L::add(q, L::mul(x, x));
            }
            if constexpr ((Needs & need_min_max) != 0) {
                mn = L::min(x, mn);
                mx = L::max(x, mx);
            }
            if constexpr ((Needs & need_prod) != 0) {
                if constexpr (is_float) {
                    pm = L::mul(pm, x);
                } else {
                    pm = L::mul(pm, L::split(x, pei));
                }
            }
        }
        if constexpr (is_float && (Needs & need_prod) != 0) {
            L::renorm(pm, pe);
        }
    }

    // The lanes, then the tail in scalar code (identical in every build).
    double v_s1[lane_count];
    double v_s2[lane_count];
    double v_as1[lane_count];
    double v_as2[lane_count];
    double v_q[lane_count];
    double v_r1[lane_count];
    double v_ar1[lane_count];
    double v_mn[lane_count];
    double v_mx[lane_count];
    double v_amn[lane_count];
    double v_pm[lane_count];
    double v_pe[lane_count];
    std::int64_t v_pei[lane_count];
    L::store(v_s1, s1);
    L::store(v_s2, s2);
    L::store(v_as1, as1);
    L::store(v_as2, as2);
    L::store(v_q, q);
    L::store(v_r1, r1);
    L::store(v_ar1, ar1);
    L::store(v_mn, mn);
    L::store(v_mx, mx);
    L::store(v_amn, amn);
    L::store(v_pm, pm);
    L::store(v_pe, pe);
    L::store(v_pei, pei);

    double t_s1 = 0;
    double t_s2 = 0;
    double t_as1 = 0;
    double t_as2 = 0;
    double t_q = 0;
    double t_r1 = 0;
    double t_ar1 = 0;
    double t_mn = inf;
    double t_mx = -inf;
    double t_amn = inf;
    double t_pm = 1;
    double t_pe = 0;
    std::int64_t t_pei = 0;
    for (; i < n; ++i) {
        const auto x = static_cast<double>(p[i]);
        const double d = x - k;
        t_r1 += x;
        t_s1 += d;
        t_s2 += d * d;
        const double a = scalar_lanes::fabs_bits(x);
        const double ad = a - ka;
        t_ar1 += a;
        t_as1 += ad;
        t_as2 += ad * ad;
        t_q += x * x;
        t_mn = x < t_mn ? x : t_mn;
        t_mx = x > t_mx ? x : t_mx;
        t_amn = a < t_amn ? a : t_amn;
        if constexpr (is_float) {
            t_pm *= x;
            scalar_lanes::renorm(t_pm, t_pe);
        } else {
            t_pm *= scalar_lanes::split(x, t_pei);
        }
    }

    real_stats st;
    const auto count = static_cast<double>(n);
    st.count = n;
    if constexpr (moments) {
        const double sum1 = lane_sum(v_s1) + t_s1;
        st.sum = raw_sums ? lane_sum(v_r1) + t_r1 : count * k + sum1;
        st.mean = k + sum1 / count;
        if constexpr ((Needs & need_m2) != 0) {
            const double m2 = (lane_sum(v_s2) + t_s2) - sum1 * sum1 / count;
            st.m2 = m2 < 0 ? 0.0 : m2; // rounding can dip below 0; NaN stays NaN
        }
    }
    if constexpr (abs_moments) {
        const double sum1 = lane_sum(v_as1) + t_as1;
        st.abs_sum = raw_sums ? lane_sum(v_ar1) + t_ar1 : count * ka + sum1;
        st.abs_mean = ka + sum1 / count;
        if constexpr ((Needs & need_abs_m2) != 0) {
            const double m2 = (lane_sum(v_as2) + t_as2) - sum1 * sum1 / count;
            st.abs_m2 = m2 < 0 ? 0.0 : m2;
        }
    }
    if constexpr ((Needs & need_sum_sq) != 0) {
        st.sum_sq = lane_sum(v_q) + t_q;
    }
    if constexpr ((Needs & need_min_max) != 0) {
        st.min = t_mn;
        st.max = t_mx;
        for (std::size_t j = 0; j < lane_count; ++j) {
            st.min = v_mn[j] < st.min ? v_mn[j] : st.min;
            st.max = v_mx[j] > st.max ? v_mx[j] : st.max;
        }
    }
    if constexpr ((Needs & need_abs_min) != 0) {
        st.abs_min = t_amn;
        for (const double lane : v_amn) {
            st.abs_min = lane < st.abs_min ? lane : st.abs_min;
        }
    }
    if constexpr ((Needs & need_prod) != 0) {
        double prod = 1;
        double prod_exp = 0;
        for (std::size_t j = 0; j < lane_count; ++j) {
            prod *= v_pm[j];
            prod_exp += is_float ? v_pe[j] : static_cast<double>(v_pei[j]);
            normalise_product(prod, prod_exp);
        }
        prod *= t_pm;
        prod_exp += is_float ? t_pe : static_cast<double>(t_pei);
        normalise_product(prod, prod_exp);
        if constexpr (!is_float) {
            // The mantissas carry the sign; the specials decide the magnitude.
            const double sign = std::signbit(prod) ? -1.0 : 1.0;
            const bool has_zero = st.abs_min == 0;
            const bool has_inf = std::fabs(st.min) == inf || std::fabs(st.max) == inf;
            if (st.saw_nan() || (has_zero && has_inf)) {
                prod = std::numeric_limits<double>::quiet_NaN();
                prod_exp = 0;
            } else if (has_zero) {
                prod = sign * 0.0;
                prod_exp = 0;
            } else if (has_inf) {
                prod = sign * inf;
                prod_exp = 0;
            } else if (st.abs_min < DBL_MIN) {
                exact_product(p, n, prod, prod_exp);
            }
        }
        st.prod = prod;
        st.prod_exp = prod_exp;
    }
    return st;
}

#if TDBG_REDUCE_X86
using baseline_lanes = sse2_lanes;
#else
using baseline_lanes = scalar_lanes;
#endif

/// The kernel builds a process can run.
enum class simd_level { portable, sse2, avx2 };

/// The best build this CPU runs.
[[nodiscard]] inline simd_level best_simd_level() noexcept {
#if TDBG_REDUCE_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? simd_level::avx2 : simd_level::sse2;
#else
    return simd_level::portable;
#endif
}

/// The build the kernels use; starts at best_simd_level(). Lowering it is for
/// benchmarks and tests: every build gives the same bits.
[[nodiscard]] inline std::atomic<simd_level>& simd_setting() noexcept {
    static std::atomic<simd_level> level{best_simd_level()};
    return level;
}

/// The kernel in the baseline build (one instantiation per needs and input type).
template <unsigned Needs, class T>
real_stats block_baseline(const T* p, std::size_t n) noexcept {
    return block_stats<Needs, baseline_lanes>(p, n);
}

#if TDBG_REDUCE_X86
/// The kernel in the AVX2 build; call only when the CPU has AVX2.
template <unsigned Needs, class T>
[[gnu::target("avx2")]] real_stats block_avx2(const T* p, std::size_t n) noexcept {
    return block_stats<Needs, avx2_lanes>(p, n);
}
#endif

/// The statistics of a block of 1 <= n <= block_size values in the build `level`.
template <unsigned Needs, class T>
[[nodiscard]] real_stats real_block(const T* p, std::size_t n, simd_level level) noexcept {
    if constexpr (Needs == 0) {
        real_stats st;
        st.count = n;
        return st;
    } else {
#if TDBG_REDUCE_X86
        if (level == simd_level::avx2) {
            return block_avx2<Needs>(p, n);
        }
#endif
        (void)level;
        return block_baseline<Needs>(p, n);
    }
}

// GCC may warn that the buffer below is read uninitialised: it is filled for [0, n) before
// the kernel reads [0, n), which GCC cannot always see through the pointer.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/// `kernel(values, n)` over the n <= block_size elements of a block converted with `convert`
/// into `U`s on the stack: how half, integer and complex input reach the float and double
/// kernels.
template <class U, class T, class Convert, class Kernel>
TDBG_REDUCE_INLINE auto converted_block(const T* p, std::size_t n, Convert convert, Kernel kernel) noexcept {
    U buffer[block_size];
    for (std::size_t i = 0; i < n; ++i) {
        buffer[i] = convert(p[i]);
    }
    return kernel(static_cast<const U*>(buffer), n);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

} // namespace tdbg::detail
