# cmake -DBUILD_DIR=... -DPREFIX=... -DCONFIG=... -DHEADER_LIST=... -DINCLUDEDIR=... -DCMAKEDIR=...
#       -DPKGCONFIGDIR=... -P tdbg_test_install.cmake
# The set-up of the packaging tests: a fresh `cmake --install` of the build tree into PREFIX,
# then checks that the package files and every public header and definition file the build knows
# of (HEADER_LIST, one path below include/ per line) arrived.
foreach(input BUILD_DIR PREFIX HEADER_LIST INCLUDEDIR CMAKEDIR PKGCONFIGDIR)
  if(NOT ${input})
    message(FATAL_ERROR "tdbg_test_install.cmake: -D${input}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE ${PREFIX})
set(config_args "")
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} ${config_args}
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${PREFIX} failed: ${status}")
endif()

set(missing "")
foreach(file ${CMAKEDIR}/tdbgConfig.cmake ${CMAKEDIR}/tdbgConfigVersion.cmake ${CMAKEDIR}/tdbgTargets.cmake
             ${CMAKEDIR}/tdbg_compiled.cmake ${CMAKEDIR}/tdbg_find_pcre2.cmake ${PKGCONFIGDIR}/tdbg.pc ${PKGCONFIGDIR}/tdbg-compiled.pc)
  if(NOT EXISTS ${PREFIX}/${file})
    list(APPEND missing ${file})
  endif()
endforeach()
file(STRINGS ${HEADER_LIST} headers)
list(LENGTH headers header_count)
if(header_count EQUAL 0)
  message(FATAL_ERROR "${HEADER_LIST} lists no headers")
endif()
foreach(header IN LISTS headers)
  if(NOT EXISTS ${PREFIX}/${INCLUDEDIR}/${header})
    list(APPEND missing ${INCLUDEDIR}/${header})
  endif()
endforeach()
if(missing)
  list(JOIN missing "\n  " missing_text)
  message(FATAL_ERROR "not installed below ${PREFIX}:\n  ${missing_text}")
endif()
message(STATUS "installed tdbg into ${PREFIX}: package files and ${header_count} headers")
