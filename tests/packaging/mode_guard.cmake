# cmake -DBUILD_DIR=... -DCONFIG=... -DPROGRAM=... -P mode_guard.cmake
# Builds the program compiled against tdbg::compiled alone (tdbg_mode_guard_compiled), then runs it.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target tdbg_mode_guard_compiled --config ${CONFIG}
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "building tdbg_mode_guard_compiled failed (${status})")
endif()
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} failed (${status})")
endif()
