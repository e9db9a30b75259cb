# The optional S3 backend: INTERFACE target tdbg::s3 (header tdbg/storage/s3.hpp).
# Needs libcurl >= 7.75 (CURLOPT_AWS_SIGV4; Debian: libcurl4-openssl-dev) and
# pugixml (Debian: libpugixml-dev). pugixml is linked as a library: its
# header-only mode (PUGIXML_HEADER_ONLY) includes pugixml.cpp, which Debian's
# package does not ship; linking also spares every user translation unit from
# compiling the parser. TDBG_S3=OFF skips looking for them: the Conan recipe and the vcpkg
# port set it from their option, so that a package never takes the backend from the machine.
option(TDBG_S3 "Define tdbg::s3 when libcurl and pugixml are found" ON)
if(TDBG_S3)
  find_package(CURL 7.75 QUIET)
  find_package(pugixml QUIET)
endif()

if(TDBG_S3 AND CURL_FOUND AND TARGET pugixml::pugixml)
  add_library(tdbg_s3 INTERFACE)
  add_library(tdbg::s3 ALIAS tdbg_s3)
  set_target_properties(tdbg_s3 PROPERTIES EXPORT_NAME s3)
  target_link_libraries(tdbg_s3 INTERFACE tdbg::tdbg CURL::libcurl pugixml::pugixml)
  # Lets code that is built either way (benchmarks) tell whether S3 is there.
  target_compile_definitions(tdbg_s3 INTERFACE TDBG_HAS_S3=1)
  # The installed package's component s3: its consumers' find_package() finds libcurl and pugixml.
  tdbg_package_component(s3 TARGETS tdbg_s3 DEPENDENCIES "CURL 7.75" "pugixml")
  set(TDBG_HAS_S3 ON)
  message(STATUS "tdbg: S3 backend enabled (tdbg::s3: libcurl ${CURL_VERSION_STRING}, pugixml ${pugixml_VERSION})")

  # bench_s3 is created by benchmarks/CMakeLists.txt (which links tdbg::tdbg
  # only); give it the S3 dependencies once every directory has been read.
  function(tdbg_s3_link_benchmark)
    if(TARGET bench_s3)
      target_link_libraries(bench_s3 PRIVATE tdbg::s3)
      target_compile_definitions(bench_s3 PRIVATE TDBG_S3_SERVER_SCRIPT="${PROJECT_SOURCE_DIR}/scripts/s3-server.sh")
    endif()
  endfunction()
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL tdbg_s3_link_benchmark)
else()
  set(TDBG_HAS_S3 OFF)
  set(_tdbg_s3_missing "")
  if(NOT CURL_FOUND)
    string(APPEND _tdbg_s3_missing " libcurl>=7.75 (libcurl4-openssl-dev)")
  endif()
  if(NOT TARGET pugixml::pugixml)
    string(APPEND _tdbg_s3_missing " pugixml (libpugixml-dev)")
  endif()
  if(TDBG_S3)
    message(STATUS "tdbg: S3 backend disabled (tdbg::s3 not defined); missing:${_tdbg_s3_missing}")
  else()
    message(STATUS "tdbg: S3 backend disabled (TDBG_S3=OFF)")
  endif()
  unset(_tdbg_s3_missing)
endif()
