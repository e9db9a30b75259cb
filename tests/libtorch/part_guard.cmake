# cmake -DNM=<nm> -DOBJECTS=<a;b> -DPART=<library> -P part_guard.cmake: the libtorch integration's
# part guard (tdbg/integrations/libtorch.hpp). Every object compiled against the engine that
# includes the integration refers to the guard's symbol, and only the integration's part defines
# it, so a program linked without that part fails to link with an error naming the symbol, and
# with it the targets to link (tdbg::libtorch_compiled or tdbg::libtorch_engine).
set(symbol tdbg_libtorch_part_missing_link_tdbg_libtorch_compiled_or_tdbg_libtorch_engine)
set(referring 0)
foreach(object IN LISTS OBJECTS)
  execute_process(COMMAND ${NM} --undefined-only ${object} OUTPUT_VARIABLE undefined RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "nm failed on ${object}")
  endif()
  if(undefined MATCHES "U ${symbol}\n")
    math(EXPR referring "${referring} + 1")
  endif()
endforeach()
if(referring EQUAL 0)
  message(FATAL_ERROR "no object of the test compiled against the engine refers to ${symbol}")
endif()
execute_process(COMMAND ${NM} --defined-only ${PART} OUTPUT_VARIABLE defined RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR NOT defined MATCHES "[RDB] ${symbol}\n")
  message(FATAL_ERROR "${PART} does not define ${symbol}")
endif()
message(STATUS "${referring} object(s) refer to ${symbol}, which ${PART} defines")
