# The optional libtorch integration: INTERFACE target tdbg::libtorch (header
# tdbg/integrations/libtorch.hpp), header-only with tdbg::tdbg; and tdbg::libtorch_compiled, the
# integration compiled once (tdbg/integrations/src/libtorch.hpp) with tdbg::compiled, which a
# program built with the engine compiled once links instead of tdbg::compiled and tdbg::libtorch.
# Needs libtorch's CMake package (Debian: libtorch-dev, which installs it below
# lib/<arch>/cmake/Torch, a place find_package searches by itself; elsewhere point Torch_DIR or
# CMAKE_PREFIX_PATH at it). TDBG_LIBTORCH=OFF skips looking for it: finding
# Torch (and the Caffe2 packages it pulls in) adds seconds to every configure.
option(TDBG_LIBTORCH "Define tdbg::libtorch when libtorch is found" ON)
if(TDBG_LIBTORCH AND NOT TARGET torch)
  # GLOBAL: Torch's imported targets (torch, torch_cpu, c10, ...) must be visible wherever
  # tdbg::libtorch is linked, also in a project that adds tdbg with add_subdirectory.
  find_package(Torch QUIET CONFIG GLOBAL)
elseif(TARGET torch)
  set(Torch_FOUND TRUE) # found by the project that added tdbg, in a directory above this one
endif()

if(TDBG_LIBTORCH AND Torch_FOUND AND TARGET torch)
  add_library(tdbg_libtorch INTERFACE)
  add_library(tdbg::libtorch ALIAS tdbg_libtorch)
  set_target_properties(tdbg_libtorch PROPERTIES EXPORT_NAME libtorch)
  # `torch` is an imported target: its include directories reach our targets as -isystem, so
  # the warnings libtorch's headers raise under -Wall -Wextra -Wpedantic stay out of -Werror builds.
  # It brings torch_cpu, c10 and _GLIBCXX_USE_CXX11_ABI with it.
  target_link_libraries(tdbg_libtorch INTERFACE tdbg::tdbg torch)
  # Lets code that is built either way tell whether the integration is there.
  target_compile_definitions(tdbg_libtorch INTERFACE TDBG_HAS_LIBTORCH=1)
  tdbg_add_compiled_libtorch(${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(tdbg_libtorch_compiled PRIVATE $<BUILD_INTERFACE:tdbg_warnings>)
  # The installed package's component libtorch: its consumers' find_package() finds Torch. Where
  # the engine is installed too (CMakeLists.txt), the component also holds the integration
  # compiled against it, tdbg::libtorch_engine.
  tdbg_package_component(libtorch TARGETS tdbg_libtorch DEPENDENCIES "Torch CONFIG")
  set(TDBG_HAS_LIBTORCH ON)
  # tdbg-libtorch.pc (libtorch ships no pkg-config file): this Torch's include directories,
  # flags and libraries, as found here.
  set(TDBG_PC_TORCH_CFLAGS "${TORCH_CXX_FLAGS}")
  foreach(dir IN LISTS TORCH_INCLUDE_DIRS)
    string(APPEND TDBG_PC_TORCH_CFLAGS " -I${dir}")
  endforeach()
  set(TDBG_PC_TORCH_LIBS "")
  foreach(library IN ITEMS torch torch_cpu c10)
    if(TARGET ${library})
      get_target_property(location ${library} IMPORTED_LOCATION)
      get_target_property(configurations ${library} IMPORTED_CONFIGURATIONS)
      if(NOT location AND configurations)
        list(GET configurations 0 configuration)
        get_target_property(location ${library} IMPORTED_LOCATION_${configuration})
      endif()
      if(location)
        string(APPEND TDBG_PC_TORCH_LIBS " ${location}")
      endif()
    endif()
  endforeach()
  message(STATUS "tdbg: libtorch integration enabled (tdbg::libtorch: Torch ${Torch_VERSION})")
else()
  set(TDBG_HAS_LIBTORCH OFF)
  if(TDBG_LIBTORCH)
    message(STATUS "tdbg: libtorch integration disabled (tdbg::libtorch not defined); missing: Torch's CMake package (libtorch-dev)")
  else()
    message(STATUS "tdbg: libtorch integration disabled (TDBG_LIBTORCH=OFF)")
  endif()
endif()
