#pragma once
/// \file
/// Four double lanes, the unit of the reduction kernels, in three builds that
/// do the same IEEE operations per lane in the same order: SSE2 (the x86-64
/// baseline), AVX2 (picked at run time, see kernel_dispatch) and portable
/// scalar code. Every build therefore returns the same bits for the same data.
/// No FMA: contracting a*b+c would change the rounding between builds.

#include <cstddef>
#include <cstdint>
#include <cstring>

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && defined(__SSE2__)
#define TDBG_REDUCE_X86 1
#include <emmintrin.h> // SSE2; the AVX2 build uses generic vector types
#else
#define TDBG_REDUCE_X86 0
#endif

#if defined(__GNUC__) || defined(__clang__)
// The kernels are written once and inlined into each ISA's entry point, which
// is what lets one template body become SSE2 and AVX2 code.
#define TDBG_REDUCE_INLINE [[gnu::always_inline]] inline
#else
#define TDBG_REDUCE_INLINE inline
#endif

namespace tdbg::detail {

/// Lanes per vector in every build.
inline constexpr std::size_t lane_count = 4;

/// Bits of a double: sign, exponent, and the exponent field of 1.0.
inline constexpr std::uint64_t abs_bits = 0x7FFFFFFFFFFFFFFFULL;
inline constexpr std::uint64_t exponent_bits = 0x7FF0000000000000ULL;
inline constexpr std::uint64_t one_bits = 0x3FF0000000000000ULL;

/// Renormalisation bounds of a running product (see scalar_lanes::renorm).
inline constexpr double renorm_high = 0x1p512;
inline constexpr double renorm_low = 0x1p-512;
inline constexpr double renorm_step = 512.0;
/// The same constants as bit patterns (2^-512, 2^512, 512.0, -512.0).
inline constexpr std::uint64_t renorm_low_bits = 0x1FF0000000000000ULL;
inline constexpr std::uint64_t renorm_high_bits = 0x5FF0000000000000ULL;
inline constexpr std::uint64_t renorm_step_bits = 0x4080000000000000ULL;
inline constexpr std::uint64_t renorm_minus_step_bits = 0xC080000000000000ULL;

/// The reference build: plain scalar code, four lanes.
struct scalar_lanes {
    struct vec {
        double v[lane_count];
    };
    struct ivec {
        std::int64_t v[lane_count];
    };

    TDBG_REDUCE_INLINE static vec splat(double x) noexcept { return {{x, x, x, x}}; }
    TDBG_REDUCE_INLINE static ivec izero() noexcept { return {{0, 0, 0, 0}}; }
    TDBG_REDUCE_INLINE static vec load(const float* p) noexcept {
        return {{static_cast<double>(p[0]), static_cast<double>(p[1]), static_cast<double>(p[2]),
                 static_cast<double>(p[3])}};
    }
    TDBG_REDUCE_INLINE static vec load(const double* p) noexcept { return {{p[0], p[1], p[2], p[3]}}; }
    TDBG_REDUCE_INLINE static void store(double* out, vec a) noexcept { std::memcpy(out, a.v, sizeof a.v); }
    TDBG_REDUCE_INLINE static void store(std::int64_t* out, ivec a) noexcept { std::memcpy(out, a.v, sizeof a.v); }

#define TDBG_DETAIL_LANEWISE(name, expr)                                                                               \
    TDBG_REDUCE_INLINE static vec name(vec a, vec b) noexcept {                                                        \
        vec r{};                                                                                                       \
        for (std::size_t j = 0; j < lane_count; ++j) {                                                                 \
            const double x = a.v[j];                                                                                   \
            const double y = b.v[j];                                                                                   \
            r.v[j] = (expr);                                                                                           \
        }                                                                                                              \
        return r;                                                                                                      \
    }
    TDBG_DETAIL_LANEWISE(add, x + y)
    TDBG_DETAIL_LANEWISE(sub, x - y)
    TDBG_DETAIL_LANEWISE(mul, (x) * (y))
    // x < m ? x : m, exactly what MINPD computes (a NaN x keeps m).
    TDBG_DETAIL_LANEWISE(min, x < y ? x : y)
    TDBG_DETAIL_LANEWISE(max, x > y ? x : y)
#undef TDBG_DETAIL_LANEWISE

    TDBG_REDUCE_INLINE static double fabs_bits(double x) noexcept {
        std::uint64_t b = 0;
        std::memcpy(&b, &x, sizeof b);
        b &= abs_bits;
        std::memcpy(&x, &b, sizeof b);
        return x;
    }
    TDBG_REDUCE_INLINE static vec abs(vec a) noexcept {
        for (double& x : a.v) {
            x = fabs_bits(x);
        }
        return a;
    }

    /// Keeps a running product p (times 2^e) within [2^-512, 2^512]: one
    /// conditional step of 2^±512. Exact, and harmless for 0, inf and NaN.
    TDBG_REDUCE_INLINE static void renorm(double& p, double& e) noexcept {
        const double a = fabs_bits(p);
        if (a > renorm_high) {
            p *= renorm_low;
            e += renorm_step;
        } else if (a < renorm_low) {
            p *= renorm_high;
            e -= renorm_step;
        }
    }
    TDBG_REDUCE_INLINE static void renorm(vec& p, vec& e) noexcept {
        for (std::size_t j = 0; j < lane_count; ++j) {
            renorm(p.v[j], e.v[j]);
        }
    }

    /// Splits x into its mantissa with x's sign and exponent field of 1.0
    /// (|m| in [1, 2) for normal x) and adds x's unbiased exponent to e.
    /// Meaningless for 0, subnormals, inf and NaN: the caller handles those.
    TDBG_REDUCE_INLINE static double split(double x, std::int64_t& e) noexcept {
        std::uint64_t b = 0;
        std::memcpy(&b, &x, sizeof b);
        e += static_cast<std::int64_t>((b >> 52U) & 0x7FFU) - 1023;
        b = (b & ~exponent_bits) | one_bits;
        std::memcpy(&x, &b, sizeof b);
        return x;
    }
    TDBG_REDUCE_INLINE static vec split(vec x, ivec& e) noexcept {
        for (std::size_t j = 0; j < lane_count; ++j) {
            x.v[j] = split(x.v[j], e.v[j]);
        }
        return x;
    }
};

#if TDBG_REDUCE_X86

/// The x86-64 baseline: two SSE2 registers per vector.
struct sse2_lanes {
    struct vec {
        __m128d lo, hi;
    };
    struct ivec {
        __m128i lo, hi;
    };

    TDBG_REDUCE_INLINE static vec splat(double x) noexcept { return {_mm_set1_pd(x), _mm_set1_pd(x)}; }
    TDBG_REDUCE_INLINE static ivec izero() noexcept { return {_mm_setzero_si128(), _mm_setzero_si128()}; }
    TDBG_REDUCE_INLINE static vec load(const float* p) noexcept {
        const __m128 f = _mm_loadu_ps(p);
        return {_mm_cvtps_pd(f), _mm_cvtps_pd(_mm_movehl_ps(f, f))};
    }
    TDBG_REDUCE_INLINE static vec load(const double* p) noexcept { return {_mm_loadu_pd(p), _mm_loadu_pd(p + 2)}; }
    TDBG_REDUCE_INLINE static void store(double* out, vec a) noexcept {
        _mm_storeu_pd(out, a.lo);
        _mm_storeu_pd(out + 2, a.hi);
    }
    TDBG_REDUCE_INLINE static void store(std::int64_t* out, ivec a) noexcept {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), a.lo);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2), a.hi);
    }
    TDBG_REDUCE_INLINE static vec add(vec a, vec b) noexcept {
        return {_mm_add_pd(a.lo, b.lo), _mm_add_pd(a.hi, b.hi)};
    }
    TDBG_REDUCE_INLINE static vec sub(vec a, vec b) noexcept {
        return {_mm_sub_pd(a.lo, b.lo), _mm_sub_pd(a.hi, b.hi)};
    }
    TDBG_REDUCE_INLINE static vec mul(vec a, vec b) noexcept {
        return {_mm_mul_pd(a.lo, b.lo), _mm_mul_pd(a.hi, b.hi)};
    }
    TDBG_REDUCE_INLINE static vec min(vec a, vec b) noexcept {
        return {_mm_min_pd(a.lo, b.lo), _mm_min_pd(a.hi, b.hi)};
    }
    TDBG_REDUCE_INLINE static vec max(vec a, vec b) noexcept {
        return {_mm_max_pd(a.lo, b.lo), _mm_max_pd(a.hi, b.hi)};
    }
    TDBG_REDUCE_INLINE static __m128d abs1(__m128d a) noexcept {
        return _mm_and_pd(a, _mm_castsi128_pd(_mm_set1_epi64x(static_cast<long long>(abs_bits))));
    }
    TDBG_REDUCE_INLINE static vec abs(vec a) noexcept { return {abs1(a.lo), abs1(a.hi)}; }

    TDBG_REDUCE_INLINE static void renorm1(__m128d& p, __m128d& e) noexcept {
        const __m128d a = abs1(p);
        const __m128d big = _mm_cmpgt_pd(a, _mm_set1_pd(renorm_high));
        const __m128d small = _mm_cmplt_pd(a, _mm_set1_pd(renorm_low));
        const __m128d scale =
            _mm_or_pd(_mm_or_pd(_mm_and_pd(big, _mm_set1_pd(renorm_low)), _mm_and_pd(small, _mm_set1_pd(renorm_high))),
                      _mm_andnot_pd(_mm_or_pd(big, small), _mm_set1_pd(1.0)));
        p = _mm_mul_pd(p, scale);
        e = _mm_add_pd(
            e, _mm_or_pd(_mm_and_pd(big, _mm_set1_pd(renorm_step)), _mm_and_pd(small, _mm_set1_pd(-renorm_step))));
    }
    TDBG_REDUCE_INLINE static void renorm(vec& p, vec& e) noexcept {
        renorm1(p.lo, e.lo);
        renorm1(p.hi, e.hi);
    }

    TDBG_REDUCE_INLINE static __m128d split1(__m128d x, __m128i& e) noexcept {
        const __m128i b = _mm_castpd_si128(x);
        const __m128i field = _mm_and_si128(_mm_srli_epi64(b, 52), _mm_set1_epi64x(0x7FF));
        e = _mm_add_epi64(e, _mm_sub_epi64(field, _mm_set1_epi64x(1023)));
        const __m128i m = _mm_or_si128(_mm_andnot_si128(_mm_set1_epi64x(static_cast<long long>(exponent_bits)), b),
                                       _mm_set1_epi64x(static_cast<long long>(one_bits)));
        return _mm_castsi128_pd(m);
    }
    TDBG_REDUCE_INLINE static vec split(vec x, ivec& e) noexcept { return {split1(x.lo, e.lo), split1(x.hi, e.hi)}; }
};

// GCC's psABI warning about returning 32-byte vectors does not apply: these
// helpers are always inlined into functions compiled for AVX2. (Arguments go
// by reference: GCC's note about their alignment ignores pragmas.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

/// One AVX2 register per vector. Written with the compilers' generic vector
/// types rather than intrinsics, so the kernel template can inline them and
/// becomes AVX2 code inside a function compiled with target("avx2") (GCC does
/// not inline target-specific intrinsics into a generic template).
struct avx2_lanes {
    using double4 = double __attribute__((vector_size(32)));
    using int4 = std::int64_t __attribute__((vector_size(32)));
    using uint4 = std::uint64_t __attribute__((vector_size(32)));
    using float4 = float __attribute__((vector_size(16)));
    struct vec {
        double4 v;
    };
    struct ivec {
        int4 v;
    };

    TDBG_REDUCE_INLINE static vec splat(double x) noexcept { return {double4{} + x}; }
    TDBG_REDUCE_INLINE static ivec izero() noexcept { return {int4{}}; }
    TDBG_REDUCE_INLINE static vec load(const float* p) noexcept {
        float4 f;
        std::memcpy(&f, p, sizeof f);
        // Element-wise, which GCC turns into one VCVTPS2PD (its __builtin_convertvector takes three).
        return {double4{f[0], f[1], f[2], f[3]}};
    }
    TDBG_REDUCE_INLINE static vec load(const double* p) noexcept {
        vec r{};
        std::memcpy(&r.v, p, sizeof r.v);
        return r;
    }
    TDBG_REDUCE_INLINE static void store(double* out, const vec& a) noexcept { std::memcpy(out, &a.v, sizeof a.v); }
    TDBG_REDUCE_INLINE static void store(std::int64_t* out, const ivec& a) noexcept {
        std::memcpy(out, &a.v, sizeof a.v);
    }
    TDBG_REDUCE_INLINE static vec add(const vec& a, const vec& b) noexcept { return {a.v + b.v}; }
    TDBG_REDUCE_INLINE static vec sub(const vec& a, const vec& b) noexcept { return {a.v - b.v}; }
    TDBG_REDUCE_INLINE static vec mul(const vec& a, const vec& b) noexcept { return {a.v * b.v}; }
    TDBG_REDUCE_INLINE static vec min(const vec& a, const vec& b) noexcept { return {a.v < b.v ? a.v : b.v}; }
    TDBG_REDUCE_INLINE static vec max(const vec& a, const vec& b) noexcept { return {a.v > b.v ? a.v : b.v}; }
    TDBG_REDUCE_INLINE static vec abs(const vec& a) noexcept {
        return {reinterpret_cast<double4>(reinterpret_cast<uint4>(a.v) & (uint4{} + abs_bits))};
    }
    TDBG_REDUCE_INLINE static void renorm(vec& p, vec& e) noexcept {
        const double4 a = abs(p).v;
        const auto big = reinterpret_cast<uint4>(a > renorm_high);
        const auto small = reinterpret_cast<uint4>(a < renorm_low);
        const uint4 scale = ((uint4{} + renorm_low_bits) & big) | ((uint4{} + renorm_high_bits) & small) |
                            ((uint4{} + one_bits) & ~(big | small));
        p.v *= reinterpret_cast<double4>(scale);
        e.v += reinterpret_cast<double4>(((uint4{} + renorm_step_bits) & big) |
                                         ((uint4{} + renorm_minus_step_bits) & small));
    }
    TDBG_REDUCE_INLINE static vec split(const vec& x, ivec& e) noexcept {
        const auto b = reinterpret_cast<uint4>(x.v);
        e.v += reinterpret_cast<int4>((b >> 52U) & 0x7FFU) - 1023;
        return {reinterpret_cast<double4>((b & ~(uint4{} + exponent_bits)) | one_bits)};
    }
};

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif

} // namespace tdbg::detail
