// A build without the CUDA toolkit or NCCL: there are no GPUs to run on, and pipeline.step says
// why when it falls back to emulated compute.
#include "gpu_step_device.hpp"

namespace nodeaudit::pipeline {

GpuAvailability find_step_gpus(const ProbeContext&) {
  return {{}, "this build has no real-GPU path (" NODEAUDIT_PIPELINE_GPU_MISSING ")", std::nullopt};
}

OpenedGpuDevice open_gpu_step_device(const GpuStepConfig&, std::function<bool()>) {
  OpenedGpuDevice none;
  none.error = "this build has no real-GPU path (" NODEAUDIT_PIPELINE_GPU_MISSING ")";
  return none;
}

}  // namespace nodeaudit::pipeline
