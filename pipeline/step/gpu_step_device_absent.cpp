// A build without the CUDA toolkit or NCCL: there are no GPUs to run on, and pipeline.step says
// why when it falls back to emulated compute.
#include "pipeline/step/gpu_step_device.hpp"

namespace nodeaudit::pipeline {
namespace {
constexpr const char* kNoRealGpuPath = "this build has no real-GPU path (" NODEAUDIT_PIPELINE_GPU_MISSING ")";
}  // namespace

GpuAvailability find_step_gpus(const ProbeContext&) { return {{}, kNoRealGpuPath, std::nullopt}; }

OpenedGpuDevice open_gpu_step_device(const GpuStepConfig&, std::function<bool()>) {
  OpenedGpuDevice none;
  none.error = kNoRealGpuPath;
  return none;
}

}  // namespace nodeaudit::pipeline
