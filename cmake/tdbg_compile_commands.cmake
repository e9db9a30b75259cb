# compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS) lists the sources of every target, also
# those of targets excluded from `all` that nothing in `all` needs, which are never built here:
# tdbg::compiled where no program links it and the command line is off, tdbg::libtorch_compiled
# without a program that uses it, the mode guard's probes. clangd and clang-tidy would check
# those files with flags no build uses. tdbg_export_built_compile_commands(), called once every
# directory of the build has been read (cmake_language(DEFER)), leaves out of the file the
# sources of tdbg's targets that no target of `all` needs, through EXPORT_COMPILE_COMMANDS.
# tests/packaging/check_compile_commands.py checks the result against the build's commands.

# The build system targets of `dir` and of the directories below it, into `out`.
function(tdbg_directory_targets dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirectories DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    tdbg_directory_targets("${subdirectory}" below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# The targets `target` needs to be built: what it links (through the link interfaces of what it
# links) and its added dependencies, aliases resolved; BUILD_INTERFACE and LINK_ONLY unwrapped,
# other generator expressions skipped.
function(tdbg_target_needs target out)
  set(needs "")
  get_target_property(type ${target} TYPE)
  set(properties INTERFACE_LINK_LIBRARIES)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    list(APPEND properties LINK_LIBRARIES MANUALLY_ADDED_DEPENDENCIES)
  endif()
  foreach(property IN LISTS properties)
    get_target_property(items ${target} ${property})
    foreach(item IN LISTS items)
      string(REGEX REPLACE "^\\$<(BUILD_INTERFACE|LINK_ONLY):(.*)>$" "\\2" item "${item}")
      if(TARGET "${item}")
        get_target_property(aliased "${item}" ALIASED_TARGET)
        if(aliased)
          set(item ${aliased})
        endif()
        list(APPEND needs ${item})
      endif()
    endforeach()
  endforeach()
  set(${out} ${needs} PARENT_SCOPE)
endfunction()

function(tdbg_export_built_compile_commands)
  tdbg_directory_targets("${CMAKE_SOURCE_DIR}" targets)
  # What `all` builds: the targets not excluded from it, then all that they need.
  set(built "")
  foreach(target IN LISTS targets)
    get_target_property(excluded ${target} EXCLUDE_FROM_ALL)
    if(NOT excluded)
      list(APPEND built ${target})
    endif()
  endforeach()
  set(pending ${built})
  while(pending)
    list(POP_FRONT pending target)
    tdbg_target_needs(${target} needs)
    foreach(need IN LISTS needs)
      if(NOT need IN_LIST built)
        list(APPEND built ${need})
        list(APPEND pending ${need})
      endif()
    endforeach()
  endwhile()
  foreach(target IN LISTS targets)
    get_target_property(source_dir ${target} SOURCE_DIR)
    string(FIND "${source_dir}/" "${PROJECT_SOURCE_DIR}/" position)
    if(position EQUAL 0 AND NOT target IN_LIST built)
      set_target_properties(${target} PROPERTIES EXPORT_COMPILE_COMMANDS OFF)
    endif()
  endforeach()
endfunction()
