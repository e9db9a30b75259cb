#pragma once
/// \file
/// CRC-32C (Castagnoli), the checksum of TFRecord framing: the CPU's CRC
/// instruction where it has one (SSE4.2 on x86-64, the CRC extension on
/// AArch64), a slicing-by-8 table otherwise; and TFRecord's masked form.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TDBG_DETAIL_CRC32C_X86 1
#include <nmmintrin.h>
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
// Built for a CPU that has the CRC extension: no runtime check needed.
#define TDBG_DETAIL_CRC32C_ARM 1
#include <arm_acle.h>
#elif defined(__aarch64__) && defined(__linux__) && defined(__GNUC__)
#define TDBG_DETAIL_CRC32C_ARM 1
#define TDBG_DETAIL_CRC32C_ARM_RUNTIME 1
#include <arm_acle.h>
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace tdbg::format {

namespace detail {

/// The reflected Castagnoli polynomial.
inline constexpr std::uint32_t crc32c_polynomial = 0x82F63B78U;

using crc32c_tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr crc32c_tables make_crc32c_tables() {
    crc32c_tables t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t crc = i;
        for (int bit = 0; bit < 8; ++bit) {
            crc = (crc & 1U) != 0 ? (crc >> 1U) ^ crc32c_polynomial : crc >> 1U;
        }
        t[0][i] = crc;
    }
    for (std::size_t k = 1; k < 8; ++k) {
        for (std::size_t i = 0; i < 256; ++i) {
            const std::uint32_t prev = t[k - 1][i];
            t[k][i] = (prev >> 8U) ^ t[0][prev & 0xFFU];
        }
    }
    return t;
}

/// Slicing-by-8 tables, computed at compile time.
inline constexpr crc32c_tables crc32c_table = make_crc32c_tables();

inline std::uint64_t load_le64(const unsigned char* p) noexcept {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) {
        v = (v << 8U) | p[i];
    }
    return v;
}

/// The portable CRC: `crc` is the running (inverted) state, not a finished CRC.
inline std::uint32_t crc32c_update_table(std::uint32_t crc, const unsigned char* p, std::size_t n) noexcept {
    const auto& t = crc32c_table;
    while (n >= 8) {
        const std::uint64_t v = load_le64(p) ^ crc;
        crc = t[7][v & 0xFFU] ^ t[6][(v >> 8U) & 0xFFU] ^ t[5][(v >> 16U) & 0xFFU] ^ t[4][(v >> 24U) & 0xFFU] ^
              t[3][(v >> 32U) & 0xFFU] ^ t[2][(v >> 40U) & 0xFFU] ^ t[1][(v >> 48U) & 0xFFU] ^ t[0][(v >> 56U) & 0xFFU];
        p += 8;
        n -= 8;
    }
    while (n-- != 0) {
        crc = (crc >> 8U) ^ t[0][(crc ^ *p++) & 0xFFU];
    }
    return crc;
}

#if defined(TDBG_DETAIL_CRC32C_X86)
__attribute__((target("sse4.2"))) inline std::uint32_t crc32c_update_hw(std::uint32_t crc, const unsigned char* p,
                                                                        std::size_t n) noexcept {
    std::uint64_t state = crc;
    while (n >= 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, p, 8);
        state = _mm_crc32_u64(state, word);
        p += 8;
        n -= 8;
    }
    auto crc32 = static_cast<std::uint32_t>(state);
    while (n-- != 0) {
        crc32 = _mm_crc32_u8(crc32, *p++);
    }
    return crc32;
}

inline bool detect_crc32c_hw() noexcept {
    __builtin_cpu_init(); // needed when called before libgcc's own initialiser (static initialisation)
    return __builtin_cpu_supports("sse4.2") != 0;
}

#elif defined(TDBG_DETAIL_CRC32C_ARM)
#if defined(TDBG_DETAIL_CRC32C_ARM_RUNTIME)
#if defined(__clang__)
#define TDBG_DETAIL_CRC32C_ARM_TARGET __attribute__((target("crc")))
#else
#define TDBG_DETAIL_CRC32C_ARM_TARGET __attribute__((target("+crc")))
#endif
#else
#define TDBG_DETAIL_CRC32C_ARM_TARGET
#endif
TDBG_DETAIL_CRC32C_ARM_TARGET inline std::uint32_t crc32c_update_hw(std::uint32_t crc, const unsigned char* p,
                                                                    std::size_t n) noexcept {
    while (n >= 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, p, 8);
        crc = __crc32cd(crc, word);
        p += 8;
        n -= 8;
    }
    while (n-- != 0) {
        crc = __crc32cb(crc, *p++);
    }
    return crc;
}
#undef TDBG_DETAIL_CRC32C_ARM_TARGET

#if defined(TDBG_DETAIL_CRC32C_ARM_RUNTIME)
inline bool detect_crc32c_hw() noexcept { return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0; }
#else
inline bool detect_crc32c_hw() noexcept { return true; }
#endif

#else
inline std::uint32_t crc32c_update_hw(std::uint32_t crc, const unsigned char* p, std::size_t n) noexcept {
    return crc32c_update_table(crc, p, n);
}
inline bool detect_crc32c_hw() noexcept { return false; }
#endif

/// True when this CPU has a CRC-32C instruction that tdbg uses (checked once).
inline bool crc32c_hw_available() noexcept {
    static const bool available = detect_crc32c_hw();
    return available;
}

/// CRC-32C of `data` with the portable table, continuing from a finished CRC `crc`.
[[nodiscard]] inline std::uint32_t crc32c_portable(std::string_view data, std::uint32_t crc = 0) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    return ~crc32c_update_table(~crc, p, data.size());
}

/// CRC-32C of `data` with the CPU instruction (only call when crc32c_hw_available()).
[[nodiscard]] inline std::uint32_t crc32c_hardware(std::string_view data, std::uint32_t crc = 0) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    return ~crc32c_update_hw(~crc, p, data.size());
}

} // namespace detail

/// CRC-32C of `data`. Pass the CRC of earlier bytes as `crc` to continue it:
/// crc32c(b, crc32c(a)) == crc32c(a + b).
[[nodiscard]] inline std::uint32_t crc32c(std::string_view data, std::uint32_t crc = 0) noexcept {
    return detail::crc32c_hw_available() ? detail::crc32c_hardware(data, crc) : detail::crc32c_portable(data, crc);
}

/// TFRecord's masked CRC: rotated right by 15 bits plus a constant, so that a
/// CRC stored inside CRC'd data does not weaken the check.
[[nodiscard]] constexpr std::uint32_t mask_crc32c(std::uint32_t crc) noexcept {
    return ((crc >> 15U) | (crc << 17U)) + 0xA282EAD8U;
}

/// The masked CRC-32C of `data`, as TFRecord headers and footers hold it.
[[nodiscard]] inline std::uint32_t masked_crc32c(std::string_view data) noexcept { return mask_crc32c(crc32c(data)); }

/// The footer smdebug writes in events/ instead of the payload's CRC: the
/// masked CRC-32C of the ten ASCII bytes "0x12345678".
inline constexpr std::uint32_t smdebug_footer_crc = 0x062dc0b3U;

} // namespace tdbg::format
