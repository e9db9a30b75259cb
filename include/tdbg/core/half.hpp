#pragma once
/// \file
/// Storage types for the 16-bit floats: IEEE half (`float16`) and `bfloat16`.
/// They hold the bits and convert to and from float; arithmetic goes through float.

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tdbg/core/detail/cuda_hd.hpp"

namespace tdbg {

namespace detail {

/// The value of a 16-bit float's bits `h` (a sign bit, `ExponentBits` exponent bits, the rest
/// mantissa: 5 exponent bits for IEEE half, 8 for bfloat16) as the wider `Wide`, float or
/// double, exactly: NaN payloads kept (a signalling NaN is not quieted), subnormals made
/// normal. The one decoding of tdbg's 16-bit floats: float16::to_float, and tdbg::cuda's
/// kernel on the host and the device. `Wide`'s exponents must reach below the narrow type's
/// subnormals (bfloat16 as float does not: it is bfloat16::value's shift).
template <class Wide, unsigned ExponentBits>
[[nodiscard]] TDBG_CUDA_HD Wide widen_16bit_float(std::uint16_t h) noexcept {
    constexpr bool is_double = std::is_same_v<Wide, double>;
    static_assert(is_double || std::is_same_v<Wide, float>, "widens to float or double");
    using bits_type = std::conditional_t<is_double, std::uint64_t, std::uint32_t>;
    constexpr unsigned wide_mantissa_bits = is_double ? 52U : 23U;
    constexpr unsigned wide_bias = is_double ? 1023U : 127U;
    constexpr unsigned mantissa_bits = 15U - ExponentBits;
    constexpr unsigned bias = (1U << (ExponentBits - 1U)) - 1U;
    constexpr unsigned all_ones = (1U << ExponentBits) - 1U;
    static_assert(wide_bias - bias > mantissa_bits, "the narrow type's subnormals are normal in Wide");
    const bits_type sign = static_cast<bits_type>(h >> 15U) << (sizeof(bits_type) * 8U - 1U);
    const unsigned exponent = (h >> mantissa_bits) & all_ones;
    bits_type mantissa = h & ((1U << mantissa_bits) - 1U);
    bits_type wide_exponent = exponent + (wide_bias - bias);
    if (exponent == all_ones) { // inf or NaN
        wide_exponent = 2U * wide_bias + 1U;
    } else if (exponent == 0) { // zero, or a subnormal: shifted until its leading 1 is the implicit bit
        wide_exponent = mantissa == 0 ? 0U : wide_bias - bias + 1U;
        while (mantissa != 0 && (mantissa >> mantissa_bits) == 0) {
            mantissa <<= 1U;
            --wide_exponent;
        }
        mantissa &= (bits_type{1} << mantissa_bits) - 1U;
    }
    const bits_type bits =
        sign | (wide_exponent << wide_mantissa_bits) | (mantissa << (wide_mantissa_bits - mantissa_bits));
#if defined(__CUDA_ARCH__)
    if constexpr (is_double) {
        return __longlong_as_double(static_cast<long long>(bits));
    } else {
        return __int_as_float(static_cast<int>(bits));
    }
#else
    Wide out = 0;
    std::memcpy(&out, &bits, sizeof out);
    return out;
#endif
}

} // namespace detail

/// IEEE 754 binary16, stored as its 16 bits.
struct float16 {
    std::uint16_t bits = 0;

    constexpr float16() noexcept = default;
    /// Rounds to nearest even, as numpy does.
    explicit float16(float value) noexcept : bits(from_float(value)) {}
    [[nodiscard]] static constexpr float16 from_bits(std::uint16_t b) noexcept {
        float16 h;
        h.bits = b;
        return h;
    }
    explicit operator float() const noexcept { return to_float(bits); }
    [[nodiscard]] float value() const noexcept { return to_float(bits); }

    [[nodiscard]] static float to_float(std::uint16_t h) noexcept { return detail::widen_16bit_float<float, 5>(h); }

    [[nodiscard]] static std::uint16_t from_float(float f) noexcept {
        std::uint32_t x = 0;
        std::memcpy(&x, &f, sizeof x);
        const auto sign = static_cast<std::uint16_t>((x >> 16U) & 0x8000U);
        const std::uint32_t abs = x & 0x7FFFFFFFU;
        if (abs >= 0x7F800000U) { // inf or nan
            const bool is_nan = abs > 0x7F800000U;
            return static_cast<std::uint16_t>(sign | 0x7C00U | (is_nan ? 0x200U | ((abs >> 13U) & 0x3FFU) : 0U));
        }
        if (abs >= 0x477FF000U) { // rounds to >= 65520: overflow to inf
            return static_cast<std::uint16_t>(sign | 0x7C00U);
        }
        if (abs < 0x38800000U) { // below the smallest normal half: subnormal or zero
            if (abs < 0x33000000U) { // below half of the smallest subnormal
                return sign;
            }
            const std::uint32_t e = abs >> 23U;
            const std::uint32_t m = (abs & 0x7FFFFFU) | 0x800000U;
            const std::uint32_t shift = 126U - e; // 14..24
            std::uint32_t half = m >> shift;
            const std::uint32_t rest = m & ((1U << shift) - 1U);
            const std::uint32_t halfway = 1U << (shift - 1U);
            if (rest > halfway || (rest == halfway && (half & 1U) != 0)) {
                ++half;
            }
            return static_cast<std::uint16_t>(sign | half);
        }
        std::uint32_t half = ((abs - 0x38000000U) >> 13U);
        const std::uint32_t rest = abs & 0x1FFFU;
        if (rest > 0x1000U || (rest == 0x1000U && (half & 1U) != 0)) {
            ++half;
        }
        return static_cast<std::uint16_t>(sign | half);
    }
};

/// Brain float: the upper 16 bits of an IEEE binary32.
struct bfloat16 {
    std::uint16_t bits = 0;

    constexpr bfloat16() noexcept = default;
    /// Rounds to nearest even; NaN stays NaN.
    explicit bfloat16(float value) noexcept {
        std::uint32_t x = 0;
        std::memcpy(&x, &value, sizeof x);
        if ((x & 0x7FFFFFFFU) > 0x7F800000U) {
            bits = static_cast<std::uint16_t>((x >> 16U) | 0x40U);
        } else {
            const std::uint32_t rounding = 0x7FFFU + ((x >> 16U) & 1U);
            bits = static_cast<std::uint16_t>((x + rounding) >> 16U);
        }
    }
    [[nodiscard]] static constexpr bfloat16 from_bits(std::uint16_t b) noexcept {
        bfloat16 h;
        h.bits = b;
        return h;
    }
    explicit operator float() const noexcept { return value(); }
    [[nodiscard]] float value() const noexcept {
        const std::uint32_t x = static_cast<std::uint32_t>(bits) << 16U;
        float f = 0;
        std::memcpy(&f, &x, sizeof f);
        return f;
    }
};

[[nodiscard]] inline bool operator==(float16 a, float16 b) noexcept { return a.value() == b.value(); }
[[nodiscard]] inline bool operator!=(float16 a, float16 b) noexcept { return !(a == b); }
[[nodiscard]] inline bool operator==(bfloat16 a, bfloat16 b) noexcept { return a.value() == b.value(); }
[[nodiscard]] inline bool operator!=(bfloat16 a, bfloat16 b) noexcept { return !(a == b); }

} // namespace tdbg
