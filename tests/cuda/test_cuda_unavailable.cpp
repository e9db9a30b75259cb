// Stands in for the CUDA kernel's tests when tdbg::cuda is not built (the reason comes from
// CMake): skips, or fails when TDBG_REQUIRE_CUDA=1 says the kernel must run.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string_view>

#include "support.hpp"

TEST_CASE("tdbg::cuda kernel on a device") {
    const char* required = std::getenv("TDBG_REQUIRE_CUDA");
    if (required != nullptr && std::string_view(required) == "1") {
        FAIL("TDBG_REQUIRE_CUDA=1 but the CUDA kernel's tests were not built: " TDBG_CUDA_UNAVAILABLE);
    }
    TDBG_SKIP(TDBG_CUDA_UNAVAILABLE);
}
