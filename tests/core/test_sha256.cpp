// SHA-256 against the FIPS 180-2 example vectors.
#include <catch2/catch.hpp>

#include <string>

#include "tdbg/core/detail/sha256.hpp"

TEST_CASE("sha256 matches the FIPS 180-2 examples, in one piece or in pieces") {
    using tdbg::detail::sha256_hex;
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    CHECK(sha256_hex(two_blocks) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const std::string million(1000000, 'a');
    CHECK(sha256_hex(million) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

    // the same digest whatever the split into update() calls
    for (const std::size_t chunk : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 1000u}) {
        tdbg::detail::sha256 h;
        for (std::size_t at = 0; at < million.size(); at += chunk) {
            h.update(std::string_view(million).substr(at, chunk));
        }
        CHECK(h.hex_digest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    }
}
