#pragma once
// Skipping a test case honestly (tests/test_main.cpp): decided before the first assertion, with
// a reason that scripts/test.sh lists; a process that skipped exits with skip_exit_code.

#include <sstream>
#include <string>

namespace tdbg::test {

/// The exit status of a test process whose test cases passed but one or more skipped: ctest
/// reports it as a skip (SKIP_RETURN_CODE), and scripts/test.sh lists each skip with its reason.
inline constexpr int skip_exit_code = 77;

/// Records a skip of the running test case (tests/test_main.cpp); fails it instead when it has
/// already made an assertion. Use TDBG_SKIP.
void skip_test(const std::string& reason);

} // namespace tdbg::test

/// Skips the current test case with a reason (streamed, as in Catch2's messages), before its
/// first assertion: a skip after an assertion fails the test.
#define TDBG_SKIP(message)                                                                                             \
    do {                                                                                                               \
        std::ostringstream tdbg_skip_reason_;                                                                          \
        tdbg_skip_reason_ << message;                                                                                  \
        ::tdbg::test::skip_test(tdbg_skip_reason_.str());                                                              \
        return;                                                                                                        \
    } while (false)
