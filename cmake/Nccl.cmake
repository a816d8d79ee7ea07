# NCCL is optional and comes with the CUDA toolkit here: the collective probes (comm/) and the
# real-GPU training step (pipeline/step) use it. Found once so both directories agree.
set(NODEAUDIT_HAVE_NCCL OFF)
set(NODEAUDIT_NCCL_MISSING "no CUDA toolkit")
if(NODEAUDIT_HAVE_CUDA)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  set(NODEAUDIT_NCCL_MISSING "no NCCL (nccl.h / libnccl not found)")
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(NODEAUDIT_HAVE_NCCL ON)
    set(NODEAUDIT_NCCL_MISSING "")
  endif()
endif()
