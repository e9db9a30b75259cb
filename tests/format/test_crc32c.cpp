#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>

#include "tdbg/format/crc32c.hpp"

using namespace tdbg::format;

namespace {

// Bit-at-a-time CRC-32C straight from the definition: the reference for the fast paths.
std::uint32_t crc32c_bitwise(const std::string& data) {
    std::uint32_t crc = 0xFFFFFFFFU;
    for (unsigned char c : data) {
        crc ^= c;
        for (int bit = 0; bit < 8; ++bit) {
            crc = (crc & 1U) != 0 ? (crc >> 1U) ^ 0x82F63B78U : crc >> 1U;
        }
    }
    return ~crc;
}

std::string random_bytes(std::mt19937& rng, std::size_t n) {
    std::uniform_int_distribution<int> byte(0, 255);
    std::string out(n, '\0');
    for (char& c : out) {
        c = static_cast<char>(byte(rng));
    }
    return out;
}

} // namespace

TEST_CASE("crc32c matches the published check values") {
    const std::string ascending = [] {
        std::string s;
        for (int i = 0; i < 32; ++i) {
            s.push_back(static_cast<char>(i));
        }
        return s;
    }();
    CHECK(crc32c("123456789") == 0xE3069283U);
    CHECK(crc32c(std::string(32, '\0')) == 0x8A9136AAU);
    CHECK(crc32c(std::string(32, '\xFF')) == 0x62A8AB43U);
    CHECK(crc32c(ascending) == 0x46DD794EU);
    CHECK(crc32c("") == 0U);
    // The same vectors through each implementation explicitly.
    CHECK(detail::crc32c_portable("123456789") == 0xE3069283U);
    CHECK(detail::crc32c_portable(ascending) == 0x46DD794EU);
    if (detail::crc32c_hw_available()) {
        CHECK(detail::crc32c_hardware("123456789") == 0xE3069283U);
        CHECK(detail::crc32c_hardware(std::string(32, '\xFF')) == 0x62A8AB43U);
    } else {
        WARN("this CPU has no CRC-32C instruction: only the table was checked");
    }
}

TEST_CASE("crc32c: the table, the bitwise definition and the CPU instruction (where it has one) agree on 16 lengths (0 to 4093 bytes) at 8 alignments") {
    std::mt19937 rng(1234);
    const std::string pool = random_bytes(rng, 5000);
    for (std::size_t length : {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 1000, 4093}) {
        for (std::size_t shift = 0; shift < 8; ++shift) {
            const std::string_view piece(pool.data() + shift, length);
            const std::uint32_t expected = crc32c_bitwise(std::string(piece));
            CHECK(detail::crc32c_portable(piece) == expected);
            if (detail::crc32c_hw_available()) {
                CHECK(detail::crc32c_hardware(piece) == expected);
            }
            CHECK(crc32c(piece) == expected);
        }
    }
}

TEST_CASE("crc32c continues a running CRC across pieces") {
    std::mt19937 rng(99);
    const std::string data = random_bytes(rng, 777);
    const std::uint32_t whole = crc32c_bitwise(data);
    for (std::size_t cut : {0, 1, 5, 8, 100, 776, 777}) {
        const std::string_view a(data.data(), cut);
        const std::string_view b(data.data() + cut, data.size() - cut);
        CHECK(crc32c(b, crc32c(a)) == whole);
        CHECK(detail::crc32c_portable(b, detail::crc32c_portable(a)) == whole);
    }
}

TEST_CASE("masked crc32c follows TFRecord's rotate-and-add rule") {
    const std::uint32_t crc = crc32c_bitwise("123456789");
    const std::uint32_t rotated = (crc >> 15U) | (crc << 17U);
    CHECK(masked_crc32c("123456789") == static_cast<std::uint32_t>(rotated + 0xA282EAD8U));
    // smdebug's constant footer is the masked CRC of the ASCII text "0x12345678".
    CHECK(masked_crc32c("0x12345678") == smdebug_footer_crc);
    CHECK(smdebug_footer_crc == 0x062dc0b3U);
}
