# cmake -DPKG_CONFIG=... -DPREFIX=... -DPKGCONFIGDIR=... -DINCLUDEDIR=... -DVERSION=... -DCXX=... -DSTANDARD=...
#       -DSOURCE=... -DWORK_DIR=... -P check.cmake
# A consumer of the installed tdbg through pkg-config: the flags point into the installation,
# and a program built with nothing but them runs.
foreach(input PKG_CONFIG PREFIX PKGCONFIGDIR INCLUDEDIR VERSION CXX STANDARD SOURCE WORK_DIR)
  if(NOT ${input})
    message(FATAL_ERROR "check.cmake: -D${input}=... is required")
  endif()
endforeach()

set(ENV{PKG_CONFIG_PATH} "${PREFIX}/${PKGCONFIGDIR}")
function(query variable)
  execute_process(COMMAND ${PKG_CONFIG} ${ARGN} tdbg RESULT_VARIABLE status OUTPUT_VARIABLE output
                  ERROR_VARIABLE error OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "pkg-config ${ARGN} tdbg failed (${status}): ${error}")
  endif()
  message(STATUS "pkg-config ${ARGN} tdbg: ${output}")
  set(${variable} "${output}" PARENT_SCOPE)
endfunction()

query(version --modversion)
if(NOT version STREQUAL VERSION)
  message(FATAL_ERROR "pkg-config reports version '${version}', the project is ${VERSION}")
endif()

query(cflags --cflags)
separate_arguments(cflags UNIX_COMMAND "${cflags}")
file(REAL_PATH "${PREFIX}/${INCLUDEDIR}" expected_include)
set(found_include FALSE)
foreach(flag IN LISTS cflags)
  if(flag MATCHES "^-I(.+)$")
    file(REAL_PATH "${CMAKE_MATCH_1}" include)
    if(include STREQUAL expected_include)
      set(found_include TRUE)
    endif()
  endif()
endforeach()
if(NOT found_include)
  message(FATAL_ERROR "pkg-config --cflags tdbg lacks -I${expected_include}")
endif()

query(libs --libs)
separate_arguments(libs UNIX_COMMAND "${libs}")

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${CXX} -std=c++${STANDARD} ${cflags} ${SOURCE} -o ${WORK_DIR}/consumer ${libs}
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "compiling ${SOURCE} with pkg-config's flags failed")
endif()
execute_process(COMMAND ${WORK_DIR}/consumer ${WORK_DIR}/scratch RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the pkg-config consumer failed: ${status}")
endif()
