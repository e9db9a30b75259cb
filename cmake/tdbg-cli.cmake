# tdbg_add_cli(<target> [OUTPUT_NAME <name>] [SOURCES <file>...]): the `tdbg` command line with
# more translation units linked in, e.g. files whose tdbg::rules::registrar objects add a
# team's own rules to `tdbg rules --rule NAME` and to --config files. Only those files are
# compiled: the program's own objects come from the library tdbg::cli, linked whole (its
# subcommands register themselves), with the engine it was built with (tdbg::engine, so the
# files are compiled with TDBG_SEPARATE_COMPILATION; link no tdbg::compiled beside it).
# Defined by tools/ in tdbg's own build and by the installed package's component cli
# (`find_package(tdbg REQUIRED COMPONENTS cli)`).
function(tdbg_add_cli target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "OUTPUT_NAME" "SOURCES")
  if(NOT arg_SOURCES)
    # add_executable() wants a source; the program is all in tdbg::cli.
    set(arg_SOURCES "${CMAKE_CURRENT_BINARY_DIR}/${target}_main.cpp")
    file(CONFIGURE OUTPUT "${arg_SOURCES}" CONTENT "// The tdbg command line: main() and the commands are in tdbg::cli.\n")
  endif()
  add_executable(${target} ${arg_SOURCES})
  target_link_libraries(${target} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,tdbg::cli>")
  # tdbg's own programs get its warnings; a project's are its own business.
  if(TARGET tdbg_warnings AND PROJECT_NAME STREQUAL "tdbg")
    target_link_libraries(${target} PRIVATE tdbg_warnings)
  endif()
  if(arg_OUTPUT_NAME)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${arg_OUTPUT_NAME})
  endif()
endfunction()
