// Test cases that skip before and after an assertion, run by check.cmake (not by ctest itself):
// the suite's rule that a skip never hides an assertion's outcome (tests/test_main.cpp).

#include <catch2/catch.hpp>

#include "skip.hpp"

TEST_CASE("probe: skips before any assertion", "[before]") {
    TDBG_SKIP("nothing to test here (a probe)");
}

TEST_CASE("probe: skips after an assertion", "[after]") {
    CHECK(1 + 1 == 2);
    TDBG_SKIP("too late to skip (a probe)");
}

TEST_CASE("probe: fails, then tries to skip", "[failed]") {
    CHECK(1 + 1 == 3);
    TDBG_SKIP("a failure must not read as a skip (a probe)");
}
