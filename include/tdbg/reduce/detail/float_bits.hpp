#pragma once
/// \file
/// The bits of a double, read and written the same way by a C++17 compiler and by nvcc's device
/// code, so that the statistics of a run of values (real_stats.hpp) merge to the same bits on
/// the host and on a GPU (tdbg::cuda). No CUDA header is needed.

#include <cstdint>
#include <cstring>

#include "tdbg/core/detail/cuda_hd.hpp"

namespace tdbg::detail {

/// The high 32 bits of a double.
TDBG_CUDA_HD inline std::uint32_t high_word(double v) noexcept {
#if defined(__CUDA_ARCH__)
    return static_cast<std::uint32_t>(__double2hiint(v));
#else
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    return static_cast<std::uint32_t>(bits >> 32U);
#endif
}

/// v with its high 32 bits replaced.
TDBG_CUDA_HD inline double with_high_word(double v, std::uint32_t high) noexcept {
#if defined(__CUDA_ARCH__)
    return __hiloint2double(static_cast<int>(high), __double2loint(v));
#else
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    bits = (bits & 0xFFFFFFFFULL) | (static_cast<std::uint64_t>(high) << 32U);
    double out = 0;
    std::memcpy(&out, &bits, sizeof out);
    return out;
#endif
}

/// The double of the given bits.
TDBG_CUDA_HD inline double double_from_bits(std::uint64_t bits) noexcept {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(bits));
#else
    double out = 0;
    std::memcpy(&out, &bits, sizeof out);
    return out;
#endif
}

/// The biased exponent field of a double (0: zero or subnormal, 0x7FF: inf or NaN).
TDBG_CUDA_HD inline unsigned exponent_field(double v) noexcept { return (high_word(v) >> 20U) & 0x7FFU; }

/// False for infinities and NaN.
TDBG_CUDA_HD inline bool is_finite(double v) noexcept { return exponent_field(v) != 0x7FFU; }

/// std::frexp of a finite non-zero v: returns m in [0.5, 1) (with v's sign) and sets
/// `exponent` so that v = m * 2^exponent. Subnormal v included.
TDBG_CUDA_HD inline double split_exponent(double v, int& exponent) noexcept {
    int adjust = 0;
    unsigned field = exponent_field(v);
    if (field == 0) { // subnormal: scale into the normal range first (exact)
        v *= 0x1p54;
        adjust = -54;
        field = exponent_field(v);
    }
    exponent = static_cast<int>(field) - 1022 + adjust;
    return with_high_word(v, (high_word(v) & 0x800FFFFFU) | (1022U << 20U));
}

} // namespace tdbg::detail
