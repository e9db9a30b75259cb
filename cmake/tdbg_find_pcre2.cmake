# Defines the imported target PCRE2::8BIT (PCRE2's 8-bit library, which tdbg's patterns use)
# unless it exists: from PCRE2's own CMake package where there is one (vcpkg, Conan, a
# source build), else from pkg-config's libpcre2-8 (Debian's libpcre2-dev ships no CMake
# package). Included by tdbg's build and by the installed tdbgConfig.cmake.
if(NOT TARGET PCRE2::8BIT)
  find_package(PCRE2 CONFIG QUIET)
endif()
if(NOT TARGET PCRE2::8BIT)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(TDBG_PCRE2 QUIET IMPORTED_TARGET libpcre2-8)
  endif()
  if(NOT TARGET PkgConfig::TDBG_PCRE2)
    message(FATAL_ERROR "tdbg needs PCRE2's 8-bit library (libpcre2-8) for its patterns: install it "
                        "(Debian: libpcre2-dev; vcpkg and Conan: pcre2) or point CMAKE_PREFIX_PATH at it")
  endif()
  add_library(PCRE2::8BIT INTERFACE IMPORTED)
  target_link_libraries(PCRE2::8BIT INTERFACE PkgConfig::TDBG_PCRE2)
endif()
