# cmake -DBUILD_DIR=... -DCONFIG=... -DFILE_STANDARD=20 -DENGINE_STANDARD=17 -P standard_guard.cmake
# Builds tdbg_standard_guard_mixed (a C++<FILE_STANDARD> file against the C++<ENGINE_STANDARD> engine
# of this tree): the link must fail, and its errors must name both standards.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target tdbg_standard_guard_mixed --config ${CONFIG}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(text "${out}${err}")
if(status EQUAL 0)
  message(FATAL_ERROR "a C++${FILE_STANDARD} file linked with the C++${ENGINE_STANDARD} engine:\n${text}")
endif()
foreach(symbol tdbg_engine_compiled_as_cxx${FILE_STANDARD} tdbg_program_compiled_as_cxx${ENGINE_STANDARD})
  if(NOT text MATCHES "undefined reference to .${symbol}")
    message(FATAL_ERROR "the link failed without naming ${symbol}:\n${text}")
  endif()
endforeach()
message(STATUS "the link failed naming tdbg_engine_compiled_as_cxx${FILE_STANDARD} and "
               "tdbg_program_compiled_as_cxx${ENGINE_STANDARD}")
