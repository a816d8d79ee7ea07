# CUDA is optional. With a toolkit the GPU probes build even on a machine with no GPU and skip at
# run time; without one they are listed as `not built (no CUDA toolkit)`.
include(CheckLanguage)
set(NODEAUDIT_HAVE_CUDA OFF)
set(NODEAUDIT_CUDA_STATUS "not built (no CUDA toolkit)")
if(NODEAUDIT_CUDA STREQUAL "OFF")
  set(NODEAUDIT_CUDA_STATUS "not built (disabled with -DNODEAUDIT_CUDA=OFF)")
else()
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # A short default list keeps CI builds fast; on a GPU node use -DCMAKE_CUDA_ARCHITECTURES=native.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures to build for")
    endif()
    enable_language(CUDA)
    # CMake 3.25 knows no C++20 dialect flag for nvcc: CUDA sources are C++17 and include no C++20
    # header (device code sees only small plain headers such as kernels/gpu/cuda_check.hpp).
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    # Debian 12's CMake 3.25 FindCUDAToolkit marks CUDA::nvToolsExt deprecated without checking that
    # the library was found; CUDA 12.9 and later ship none, and the configure then fails with "could not
    # find TARGET CUDA::nvToolsExt". It sets the mark only for a project that requires 3.25 or later, so
    # the look-up runs with the minimum read as 3.24 (nodeaudit uses neither nvToolsExt nor nvtx3).
    set(nodeaudit_required_cmake ${CMAKE_MINIMUM_REQUIRED_VERSION})
    set(CMAKE_MINIMUM_REQUIRED_VERSION 3.24)
    find_package(CUDAToolkit REQUIRED)
    set(CMAKE_MINIMUM_REQUIRED_VERSION ${nodeaudit_required_cmake})
    set(NODEAUDIT_HAVE_CUDA ON)
    set(NODEAUDIT_CUDA_STATUS "built (CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  elseif(NODEAUDIT_CUDA STREQUAL "ON")
    message(FATAL_ERROR "NODEAUDIT_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER)")
  endif()
endif()
# In the cache for make audit's first line (scripts/audit-build-note.sh), which estimates the build.
set(NODEAUDIT_GPU_PROBES_BUILT ${NODEAUDIT_HAVE_CUDA} CACHE INTERNAL "The GPU probes are compiled in this tree")
