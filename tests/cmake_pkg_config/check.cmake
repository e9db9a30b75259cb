# cmake -DPKG_CONFIG=... -DPREFIX=... -DPKGCONFIGDIR=... -DINCLUDEDIR=... -DVERSION=... -DCXX=... -DSTANDARD=...
#       -DSOURCE=... -DWORK_DIR=... -P check.cmake
# A consumer of the installed tdbg through pkg-config: the flags point into the installation,
# and a program built with nothing but them runs, header-only (tdbg) and with the engine
# compiled once (tdbg-compiled: the program plus one file that includes tdbg/src.hpp).
foreach(input PKG_CONFIG PREFIX PKGCONFIGDIR INCLUDEDIR VERSION CXX STANDARD SOURCE WORK_DIR)
  if(NOT ${input})
    message(FATAL_ERROR "check.cmake: -D${input}=... is required")
  endif()
endforeach()

set(ENV{PKG_CONFIG_PATH} "${PREFIX}/${PKGCONFIGDIR}")
# query(<variable> <package> <pkg-config arguments>...)
function(query variable package)
  execute_process(COMMAND ${PKG_CONFIG} ${ARGN} ${package} RESULT_VARIABLE status OUTPUT_VARIABLE output
                  ERROR_VARIABLE error OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "pkg-config ${ARGN} ${package} failed (${status}): ${error}")
  endif()
  message(STATUS "pkg-config ${ARGN} ${package}: ${output}")
  set(${variable} "${output}" PARENT_SCOPE)
endfunction()

query(version tdbg --modversion)
if(NOT version STREQUAL VERSION)
  message(FATAL_ERROR "pkg-config reports version '${version}', the project is ${VERSION}")
endif()

query(cflags tdbg --cflags)
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

query(libs tdbg --libs)
separate_arguments(libs UNIX_COMMAND "${libs}")

# run(<name> <command>...): runs a compiler or the program, fails with its name.
function(run name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${name} failed (${status}): ${ARGN}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
run("compiling the header-only consumer" ${CXX} -std=c++${STANDARD} ${cflags} ${SOURCE} -o ${WORK_DIR}/consumer ${libs})
run("the header-only consumer" ${WORK_DIR}/consumer ${WORK_DIR}/scratch)

query(compiled_cflags tdbg-compiled --cflags)
query(compiled_libs tdbg-compiled --libs)
separate_arguments(compiled_cflags UNIX_COMMAND "${compiled_cflags}")
separate_arguments(compiled_libs UNIX_COMMAND "${compiled_libs}")
list(FIND compiled_cflags "-DTDBG_SEPARATE_COMPILATION" position)
if(position EQUAL -1)
  message(FATAL_ERROR "pkg-config --cflags tdbg-compiled lacks -DTDBG_SEPARATE_COMPILATION")
endif()
file(WRITE ${WORK_DIR}/engine.cpp "#include <tdbg/src.hpp>\n")
run("compiling tdbg/src.hpp" ${CXX} -std=c++${STANDARD} ${compiled_cflags} -c ${WORK_DIR}/engine.cpp -o ${WORK_DIR}/engine.o)
run("compiling the consumer" ${CXX} -std=c++${STANDARD} ${compiled_cflags} -DTDBG_CONSUMER_SEPARATE -c ${SOURCE}
    -o ${WORK_DIR}/consumer_compiled.o)
run("linking the consumer" ${CXX} ${WORK_DIR}/consumer_compiled.o ${WORK_DIR}/engine.o -o ${WORK_DIR}/consumer_compiled
    ${compiled_libs})
run("the consumer with the engine compiled once" ${WORK_DIR}/consumer_compiled ${WORK_DIR}/scratch_compiled)

# The components' modules the build has (MODULES, e.g. tdbg-s3|tdbg-libtorch|tdbg-engine|tdbg-cli):
# each resolves, with its dependencies' flags; tdbg-libtorch's directories and libraries exist;
# a program linked with tdbg-engine's flags (its own file compiled, none of tdbg's) runs; and
# with tdbg-cli a rule of the program's own (RULE_SOURCE) linked with nothing but its flags makes
# `tdbg` that lists the rule.
string(REPLACE "|" ";" modules "${MODULES}")
foreach(module IN LISTS modules)
  if(NOT EXISTS "${PREFIX}/${PKGCONFIGDIR}/${module}.pc")
    message(FATAL_ERROR "the build has the component of ${module}, and installed no ${module}.pc")
  endif()
  query(module_version ${module} --modversion)
  query(module_cflags ${module} --cflags)
  query(module_libs ${module} --libs)
  separate_arguments(module_cflags UNIX_COMMAND "${module_cflags}")
  separate_arguments(module_libs UNIX_COMMAND "${module_libs}")
  if(module STREQUAL "tdbg-libtorch")
    foreach(flag IN LISTS module_cflags module_libs)
      set(path "")
      if(flag MATCHES "^-I(.+)$")
        set(path "${CMAKE_MATCH_1}")
      elseif(flag MATCHES "^/")
        set(path "${flag}")
      endif()
      if(path AND NOT EXISTS "${path}")
        message(FATAL_ERROR "tdbg-libtorch names a directory or library that does not exist: ${path}")
      endif()
    endforeach()
    if(NOT module_libs MATCHES "torch")
      message(FATAL_ERROR "tdbg-libtorch links no libtorch: ${module_libs}")
    endif()
  elseif(module STREQUAL "tdbg-engine")
    # The installed engine: the program compiles its own file only, and links the engine.
    run("compiling the consumer with tdbg-engine's flags" ${CXX} -std=c++${STANDARD} ${module_cflags}
        -DTDBG_CONSUMER_SEPARATE -c ${SOURCE} -o ${WORK_DIR}/consumer_engine.o)
    run("linking the consumer with the installed engine" ${CXX} ${WORK_DIR}/consumer_engine.o
        -o ${WORK_DIR}/consumer_engine ${module_libs})
    run("the consumer with the installed engine" ${WORK_DIR}/consumer_engine ${WORK_DIR}/scratch_engine)
  elseif(module STREQUAL "tdbg-cli")
    run("compiling a rule with tdbg-cli's flags" ${CXX} -std=c++${STANDARD} ${module_cflags} -c ${RULE_SOURCE}
        -o ${WORK_DIR}/my_rule.o)
    run("linking tdbg with the rule" ${CXX} ${WORK_DIR}/my_rule.o -o ${WORK_DIR}/my_tdbg ${module_libs})
    execute_process(COMMAND ${WORK_DIR}/my_tdbg rules --list RESULT_VARIABLE status OUTPUT_VARIABLE listed)
    if(NOT status EQUAL 0 OR NOT listed MATCHES "ConsumerRule")
      message(FATAL_ERROR "my_tdbg rules --list (${status}) does not list the rule:\n${listed}")
    endif()
  endif()
endforeach()
message(STATUS "pkg-config: tdbg, tdbg-compiled ${MODULES}: resolved and consumed")
