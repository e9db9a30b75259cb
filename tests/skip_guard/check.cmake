# cmake -DPROBE=<tdbg_skip_guard_probe> -P check.cmake: a skip before the first assertion exits
# 77 (ctest's skip) with its reason on one line; a skip after a passed or a failed assertion
# fails the test case (exit status: its failed assertions, never 77), naming the rule.
function(run_probe tag expected_status expected_text)
  execute_process(COMMAND ${PROBE} ${tag} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status STREQUAL expected_status)
    message(FATAL_ERROR "${tag}: exit status ${status}, expected ${expected_status}:\n${out}")
  endif()
  string(FIND "${out}" "${expected_text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${tag}: the output lacks '${expected_text}':\n${out}")
  endif()
endfunction()
run_probe("[before]" 77 "SKIPPED: nothing to test here (a probe)")
run_probe("[after]" 1 "a test case skipped after 1 assertion(s), which a skip would hide")
run_probe("[failed]" 2 "a test case skipped after 1 assertion(s)") # the failed CHECK, then the skip
message(STATUS "skips: before an assertion exit 77, after one fail")
