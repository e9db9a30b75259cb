# vcpkg port of tdbg. Point SOURCE_PATH at a release archive with vcpkg_from_github() when
# publishing; an overlay port of a local checkout uses the tree this file sits in.
# tests/packaging/vcpkg_port.cmake runs this file's steps in the test suite.
if(NOT DEFINED SOURCE_PATH)
  get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
endif()

vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    s3       TDBG_S3
    libtorch TDBG_LIBTORCH
    engine   TDBG_ENGINE
    tools    TDBG_BUILD_TOOLS
)
# The components the features ask for: configuring fails naming one it cannot build, so the
# machine never decides what the package holds.
set(required_components "")
foreach(feature IN ITEMS s3 libtorch engine tools)
  # The command line comes with the engine it links.
  if(feature IN_LIST FEATURES OR (feature STREQUAL "engine" AND "tools" IN_LIST FEATURES))
    string(REPLACE "tools" "cli" component "${feature}")
    list(APPEND required_components ${component})
  endif()
endforeach()
list(JOIN required_components "," required_components)

# Without the engine and tools the package is headers and CMake files: one build type is all there is.
if(NOT "tools" IN_LIST FEATURES AND NOT "engine" IN_LIST FEATURES)
  set(VCPKG_BUILD_TYPE release)
endif()

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    ${FEATURE_OPTIONS}
    -DTDBG_BUILD_TESTS=OFF
    -DTDBG_BUILD_EXAMPLES=OFF
    -DTDBG_BUILD_BENCHMARKS=OFF
    -DTDBG_CUDA=OFF
    -DTDBG_INSTALL=ON
    -DTDBG_INSTALL_CMAKEDIR=share/tdbg
    "-DTDBG_REQUIRED_COMPONENTS=${required_components}"
)
vcpkg_cmake_install()
# Installed where vcpkg wants it (share/tdbg); the fixup merges the debug build's files.
vcpkg_cmake_config_fixup(PACKAGE_NAME tdbg CONFIG_PATH share/tdbg)
vcpkg_fixup_pkgconfig()
if("tools" IN_LIST FEATURES)
  vcpkg_copy_tools(TOOL_NAMES tdbg AUTO_CLEAN)
endif()
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug/include" "${CURRENT_PACKAGES_DIR}/debug/share")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
