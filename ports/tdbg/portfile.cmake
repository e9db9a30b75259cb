# vcpkg port of tdbg (header-only). Point SOURCE_PATH at a release archive with
# vcpkg_from_github() when publishing; an overlay port of a local checkout uses the tree
# this file sits in.
if(NOT DEFINED SOURCE_PATH)
  get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
endif()

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    -DTDBG_BUILD_TESTS=OFF
    -DTDBG_BUILD_EXAMPLES=OFF
    -DTDBG_BUILD_BENCHMARKS=OFF
    -DTDBG_BUILD_TOOLS=OFF
    -DTDBG_INSTALL=ON
)
vcpkg_cmake_install()
# tdbg installs its CMake package under share/cmake/tdbg.
vcpkg_cmake_config_fixup(PACKAGE_NAME tdbg CONFIG_PATH share/cmake/tdbg)
# Header-only: nothing in the debug tree but duplicates.
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug")
file(INSTALL "${SOURCE_PATH}/LICENSE" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}" RENAME copyright)
