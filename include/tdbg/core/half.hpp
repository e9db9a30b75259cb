#pragma once
/// \file
/// Storage types for the 16-bit floats: IEEE half (`float16`) and `bfloat16`.
/// They hold the bits and convert to and from float; arithmetic goes through float.

#include <cstdint>
#include <cstring>

namespace tdbg {

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

    [[nodiscard]] static float to_float(std::uint16_t h) noexcept {
        const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000U) << 16U;
        const std::uint32_t exponent = (h >> 10U) & 0x1FU;
        std::uint32_t mantissa = h & 0x3FFU;
        std::uint32_t out = 0;
        if (exponent == 0x1FU) {
            out = sign | 0x7F800000U | (mantissa << 13U);
        } else if (exponent != 0) {
            out = sign | ((exponent + 112U) << 23U) | (mantissa << 13U);
        } else if (mantissa != 0) {
            std::uint32_t e = 113;
            while ((mantissa & 0x400U) == 0) {
                mantissa <<= 1U;
                --e;
            }
            out = sign | (e << 23U) | ((mantissa & 0x3FFU) << 13U);
        } else {
            out = sign;
        }
        float f = 0;
        std::memcpy(&f, &out, sizeof f);
        return f;
    }

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
