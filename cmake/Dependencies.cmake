# Required host dependencies, all Debian packages (scripts/install-deps.sh installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3.10 CONFIG REQUIRED)
find_package(tomlplusplus CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
pkg_check_modules(URING REQUIRED IMPORTED_TARGET liburing)
pkg_check_modules(TURBOJPEG REQUIRED IMPORTED_TARGET libturbojpeg)

# MPI is optional: without it the multi-node probes are listed as `not built (no MPI)`.
# The project enables only CXX, so MPI is looked up through its CXX component (the C API called
# from C++; the deprecated C++ bindings are skipped). Open MPI's wrapper is the usual hint.
set(NODEAUDIT_HAVE_MPI OFF)
set(NODEAUDIT_MPI_STATUS "not built (no MPI)")
if(NOT NODEAUDIT_MPI STREQUAL "OFF")
  set(MPI_CXX_SKIP_MPICXX ON)
  if(NOT MPI_CXX_COMPILER AND EXISTS /usr/bin/mpicxx)
    set(MPI_CXX_COMPILER /usr/bin/mpicxx)
  endif()
  if(NODEAUDIT_MPI STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS CXX)
  else()
    find_package(MPI QUIET COMPONENTS CXX)
  endif()
  if(MPI_CXX_FOUND)
    set(NODEAUDIT_HAVE_MPI ON)
    set(NODEAUDIT_MPI_STATUS "built (MPI ${MPI_CXX_VERSION}, launcher ${MPIEXEC_EXECUTABLE})")
  endif()
else()
  set(NODEAUDIT_MPI_STATUS "not built (disabled with -DNODEAUDIT_MPI=OFF)")
endif()

# Version stamp: the git commit goes into every result file.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                OUTPUT_VARIABLE NODEAUDIT_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT NODEAUDIT_GIT_COMMIT)
  set(NODEAUDIT_GIT_COMMIT "unknown")
endif()
