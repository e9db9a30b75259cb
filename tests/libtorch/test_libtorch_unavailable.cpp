// Stands in for the libtorch integration's tests when they are not built (the reason comes
// from CMake): skips, or fails when TDBG_REQUIRE_TORCH=1 says libtorch must be there (CI).

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string_view>

#include "support.hpp"

TEST_CASE("libtorch integration") {
    const char* required = std::getenv("TDBG_REQUIRE_TORCH");
    if (required != nullptr && std::string_view(required) == "1") {
        FAIL("TDBG_REQUIRE_TORCH=1 but the libtorch tests were not built: " TDBG_LIBTORCH_UNAVAILABLE);
    }
    TDBG_SKIP(TDBG_LIBTORCH_UNAVAILABLE);
}
