# Run as the MPI test when CMake found no MPI: a skip, unless TDBG_REQUIRE_MPI=1 makes it a failure.
set(reason "MPI was not found when the build was configured (Debian: apt-get install openmpi-bin libopenmpi-dev, then configure again)")
if("$ENV{TDBG_REQUIRE_MPI}" STREQUAL "1")
  message(FATAL_ERROR "${reason}; TDBG_REQUIRE_MPI=1 makes this a failure")
endif()
message("SKIPPED: ${reason}")
