// The suite's main: Catch2's session, plus the rule that keeps a skip honest. A test case may
// skip (TDBG_SKIP, tests/support.hpp) only before its first assertion; a skip after one fails,
// since a skipped test's earlier failures would read as a skip. A process whose test cases
// passed but one or more skipped exits with tdbg::test::skip_exit_code, which ctest reports as
// skipped (SKIP_RETURN_CODE, tests/CMakeLists.txt); one with a failure always exits non-zero.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>
#include <string>

#include "skip.hpp"

namespace {

struct skip_state {
    int assertions_in_case = 0;
    int skipped_cases = 0;
};

skip_state& state() {
    static skip_state s;
    return s;
}

// Counts the assertions of the running test case. WARN is a message, not an assertion; every
// other macro (REQUIRE, CHECK, their THROWS and NOTHROW forms, FAIL, SUCCEED) counts, passed or
// not: Catch2 announces each one here before it evaluates it.
class assertion_counter : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;
    void testCaseStarting(Catch::TestCaseInfo const& info) override {
        state().assertions_in_case = 0;
        TestEventListenerBase::testCaseStarting(info);
    }
    void assertionStarting(Catch::AssertionInfo const& info) override {
        if (info.macroName != Catch::StringRef("WARN")) {
            ++state().assertions_in_case;
        }
    }
};

} // namespace

CATCH_REGISTER_LISTENER(assertion_counter)

namespace tdbg::test {

void skip_test(const std::string& reason) {
    if (state().assertions_in_case > 0) {
        FAIL("a test case skipped after " << state().assertions_in_case
                                          << " assertion(s), which a skip would hide; decide the skip first: " << reason);
    }
    // One unwrapped line (Catch2's own messages wrap at 80 columns), which ctest keeps in its
    // JUnit file and scripts/ctest_skips.py reads.
    std::cout << "SKIPPED: " << reason << std::endl;
    ++state().skipped_cases;
}

} // namespace tdbg::test

int main(int argc, char* argv[]) {
    const int failures = Catch::Session().run(argc, argv);
    if (failures != 0) {
        return failures == tdbg::test::skip_exit_code ? 1 : failures;
    }
    return state().skipped_cases > 0 ? tdbg::test::skip_exit_code : 0;
}
