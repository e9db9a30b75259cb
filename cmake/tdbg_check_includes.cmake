# cmake -DCXX=<compiler> -DSTANDARD=<17|20> -DINCLUDE_DIR=<tdbg's include dir>
#       -DINCLUDES=<dir>|<dir>... -DWORK_DIR=<scratch dir> [-DONLY=<regex>] -P tdbg_check_includes.cmake
#
# The headers pull only what they use. With TDBG_SEPARATE_COMPILATION (the headers declare,
# tdbg::compiled defines), each header below compiles on its own (-fsyntax-only, tdbg's
# warnings as errors), the compiler lists every file it included (-MD), and:
#   - the headers a trainer or a rule author includes pull neither nlohmann_json, nor <regex>,
#     nor PCRE2, and no tdbg file they pull includes a POSIX header (unistd, fcntl, dirent,
#     poll, sys/*);
#   - the built-in rules' definition files (impl/*.ipp) compile alone too;
#   - core/ (but its xtensor bridges, core/xtensor.hpp and core/xexpression.hpp), format/,
#     storage/'s concept and the trial and rules headers pull no xtensor: it enters where
#     expressions are saved (hook/hook.hpp) or values returned as xarrays (core/xtensor.hpp).
# Fails listing each header and what it should not have pulled.
cmake_minimum_required(VERSION 3.25)
foreach(input CXX STANDARD INCLUDE_DIR WORK_DIR)
  if(NOT ${input})
    message(FATAL_ERROR "tdbg_check_includes.cmake: -D${input}=... is required")
  endif()
endforeach()
string(REPLACE "|" ";" include_dirs "${INCLUDES}")
set(flags -std=c++${STANDARD} -DTDBG_SEPARATE_COMPILATION -I${INCLUDE_DIR})
foreach(dir IN LISTS include_dirs)
  if(dir)
    list(APPEND flags -idirafter ${dir}) # after the system directories: keeps #include_next working
  endif()
endforeach()

set(forbidden_everywhere "nlohmann/|/regex$|/pcre2[^/]*\\.h$")
# POSIX headers are judged by who includes them: the standard library may (libstdc++'s C++20
# headers include unistd.h for their waits), tdbg's headers must not.
set(posix_include "^[ \t]*#[ \t]*include[ \t]*<(unistd|fcntl|dirent|poll|sys/[a-z_]+)\\.h>")
set(no_xtensor "/xtensor/")

# What users include: every public header outside detail/ and impl/ (but those of the optional
# S3 backend and integrations, which need their dependencies), and what each may pull.
file(GLOB public_headers RELATIVE "${INCLUDE_DIR}" "${INCLUDE_DIR}/tdbg/*/*.hpp" "${INCLUDE_DIR}/tdbg/rules/builtin/*.hpp")
list(FILTER public_headers EXCLUDE REGEX "^tdbg/(src|integrations)/|^tdbg/storage/s3")
# Every public header is one a trainer's file may include (the writer's threads, which use POSIX,
# are internal: hook/detail/, their definitions in hook/detail/impl/).
set(trainer_headers ${public_headers})
file(GLOB core_headers RELATIVE "${INCLUDE_DIR}" "${INCLUDE_DIR}/tdbg/core/*.hpp")
file(GLOB format_headers RELATIVE "${INCLUDE_DIR}" "${INCLUDE_DIR}/tdbg/format/*.hpp")
file(GLOB builtin_headers RELATIVE "${INCLUDE_DIR}" "${INCLUDE_DIR}/tdbg/rules/builtin/*.hpp")
list(REMOVE_ITEM core_headers tdbg/core/xtensor.hpp tdbg/core/xexpression.hpp)
set(xtensor_free ${core_headers} ${format_headers} ${builtin_headers} tdbg/trial/trial.hpp tdbg/trial/tensor.hpp
                 tdbg/rules/rule.hpp tdbg/rules/invoke.hpp tdbg/rules/registry.hpp tdbg/rules/values.hpp
                 tdbg/storage/storage.hpp tdbg/storage/open.hpp tdbg/storage/local_storage.hpp
                 tdbg/hook/options.hpp tdbg/hook/collection.hpp)
set(checked ${public_headers} ${xtensor_free})
list(REMOVE_DUPLICATES checked)
# ONLY=<regex>: check just the headers it matches (ctest runs the areas side by side).
if(ONLY)
  list(FILTER checked INCLUDE REGEX "${ONLY}")
endif()

# The built-in rules' definition files, each alone (the header check compiles their headers together).
file(GLOB builtin_definitions RELATIVE "${INCLUDE_DIR}" "${INCLUDE_DIR}/tdbg/rules/builtin/impl/*.ipp")
if(ONLY)
  list(FILTER builtin_definitions INCLUDE REGEX "${ONLY}")
endif()
list(APPEND checked ${builtin_definitions})

file(MAKE_DIRECTORY "${WORK_DIR}")
set(problems "")
foreach(header IN LISTS checked)
  if(NOT EXISTS "${INCLUDE_DIR}/${header}")
    string(APPEND problems "  ${header}: no such header (update this list)\n")
    continue()
  endif()
  string(MAKE_C_IDENTIFIER "${header}" stem)
  set(source "${WORK_DIR}/${stem}.cpp")
  file(WRITE "${source}" "#include <${header}>\n")
  # Compiled for real (syntax and semantics, no code): each of these headers compiles on its own
  # with the engine separately compiled; the dependency file lists what it included.
  execute_process(COMMAND ${CXX} ${flags} -Wall -Wextra -Wpedantic -Werror -fsyntax-only -MD -MF "${WORK_DIR}/${stem}.d"
                          "${source}" RESULT_VARIABLE status ERROR_VARIABLE error)
  if(NOT status EQUAL 0)
    string(APPEND problems "  ${header}: does not compile on its own:\n${error}\n")
    continue()
  endif()
  file(READ "${WORK_DIR}/${stem}.d" deps)
  string(REPLACE "\\\n" " " deps "${deps}")
  separate_arguments(files UNIX_COMMAND "${deps}")
  set(bad "")
  foreach(file IN LISTS files)
    set(posix "")
    if(header IN_LIST trainer_headers AND file MATCHES "/tdbg/.*\\.(hpp|ipp)$" AND EXISTS "${file}")
      file(STRINGS "${file}" posix REGEX "${posix_include}")
    endif()
    # Only what this build really included (a header may name one for another architecture).
    set(included_posix "")
    foreach(line IN LISTS posix)
      string(REGEX MATCH "<[a-z_/]+\\.h>" name "${line}")
      string(REGEX REPLACE "[<>]" "" name "${name}")
      if(deps MATCHES "/${name}([ \n]|$)")
        list(APPEND included_posix "${name}")
      endif()
    endforeach()
    if(included_posix)
      list(APPEND bad "${file} (includes ${included_posix})")
    elseif(header IN_LIST trainer_headers AND file MATCHES "${forbidden_everywhere}")
      list(APPEND bad "${file}")
    elseif(header IN_LIST xtensor_free AND file MATCHES "${no_xtensor}")
      list(APPEND bad "${file}")
    endif()
  endforeach()
  if(bad)
    list(LENGTH bad count)
    list(SUBLIST bad 0 3 first)
    list(JOIN first ", " first_text)
    string(APPEND problems "  ${header} pulls ${count} file(s) it should not, e.g. ${first_text}\n")
  endif()
endforeach()
if(problems)
  message(FATAL_ERROR "Headers pull more than they use (with TDBG_SEPARATE_COMPILATION):\n${problems}")
endif()
list(LENGTH checked count)
message(STATUS "${count} headers pull only what they use")
