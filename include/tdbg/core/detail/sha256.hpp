#pragma once
/// \file
/// SHA-256 (FIPS 180-4). The S3 adapter signs bodies with it (`x-amz-content-sha256`:
/// S3 refuses a body corrupted on the way rather than storing it); `tdbg dump` and the
/// tests use it for the value digests of smdebug's golden files.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tdbg::detail {

/// Incremental SHA-256.
class sha256 {
public:
    /// Hashes more bytes.
    void update(std::string_view data) noexcept {
        const auto* p = reinterpret_cast<const unsigned char*>(data.data());
        std::size_t left = data.size();
        total_ += left;
        if (used_ > 0) {
            const std::size_t take = left < 64 - used_ ? left : 64 - used_;
            for (std::size_t i = 0; i < take; ++i) {
                block_[used_ + i] = p[i];
            }
            used_ += take;
            p += take;
            left -= take;
            if (used_ == 64) {
                compress(block_.data());
                used_ = 0;
            }
        }
        while (left >= 64) {
            compress(p);
            p += 64;
            left -= 64;
        }
        for (std::size_t i = 0; i < left; ++i) {
            block_[i] = p[i];
        }
        used_ += left;
    }

    /// The digest as 64 lower-case hex digits (the form SigV4 wants).
    [[nodiscard]] std::string hex_digest() {
        const std::uint64_t bits = total_ * 8;
        const unsigned char pad = 0x80;
        update(std::string_view(reinterpret_cast<const char*>(&pad), 1));
        const unsigned char zero = 0;
        while (used_ != 56) {
            update(std::string_view(reinterpret_cast<const char*>(&zero), 1));
        }
        unsigned char length[8];
        for (int i = 0; i < 8; ++i) {
            length[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
        }
        update(std::string_view(reinterpret_cast<const char*>(length), 8));
        static constexpr char digits[] = "0123456789abcdef";
        std::string out;
        out.reserve(64);
        for (std::uint32_t word : state_) {
            for (int shift = 28; shift >= 0; shift -= 4) {
                out += digits[(word >> shift) & 0xfu];
            }
        }
        return out;
    }

private:
    static std::uint32_t rotr(std::uint32_t x, int n) noexcept { return (x >> n) | (x << (32 - n)); }

    void compress(const unsigned char* block) noexcept {
        static constexpr std::uint32_t k[64] = {
            0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
            0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
            0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
            0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
            0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
            0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
            0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
            0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
        std::uint32_t w[64];
        for (std::size_t i = 0; i < 16; ++i) {
            w[i] = static_cast<std::uint32_t>(block[4 * i]) << 24 | static_cast<std::uint32_t>(block[4 * i + 1]) << 16 |
                   static_cast<std::uint32_t>(block[4 * i + 2]) << 8 | static_cast<std::uint32_t>(block[4 * i + 3]);
        }
        for (int i = 16; i < 64; ++i) {
            const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        std::uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
        std::uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
        for (int i = 0; i < 64; ++i) {
            const std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
            const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        state_[0] += a;
        state_[1] += b;
        state_[2] += c;
        state_[3] += d;
        state_[4] += e;
        state_[5] += f;
        state_[6] += g;
        state_[7] += h;
    }

    std::array<std::uint32_t, 8> state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::array<unsigned char, 64> block_{};
    std::size_t used_ = 0;
    std::uint64_t total_ = 0;
};

/// SHA-256 of `data` as lower-case hex.
inline std::string sha256_hex(std::string_view data) {
    sha256 h;
    h.update(data);
    return h.hex_digest();
}

} // namespace tdbg::detail
