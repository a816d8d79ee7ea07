// pipeline.step on the node's own GPUs: each GPU gets its own batch per step through a copy
// stream from pinned host memory, computes the profile's FLOPs as cuBLASLt GEMMs on its compute
// stream, and all-reduces the profile's gradient bytes with NCCL on a communication stream (in
// buckets during the backward GEMMs when the profile overlaps them). Times come from CUDA events.
// No CUDA header here: a build without CUDA or NCCL links gpu_step_device_absent.cpp instead,
// which says why, and pipeline.step emulates compute.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/context.hpp"
#include "harness/core/probe.hpp"
#include "pipeline/step/gpu_step_plan.hpp"
#include "pipeline/step/step_device.hpp"

namespace nodeaudit::pipeline {

// The GPUs the run-wide --gpus selects, or why there are none (the CUDA runtime's reason, or a
// build without CUDA/NCCL); `stop` is bad input when --gpus names a GPU that does not exist.
struct GpuAvailability {
  std::vector<int> devices;
  std::string why_none;
  std::optional<Outcome> stop;
};
GpuAvailability find_step_gpus(const ProbeContext& ctx);

struct GpuStepConfig {
  std::vector<int> devices;
  StepGemms gemms;
  StepAllReduce allreduce;  // ignored with one GPU
  std::size_t batch_bytes = 0;
};

// Measured before the run with each part alone (the second of two tries; the first warms up
// cuBLASLt's heuristics, lazy kernel loading and NCCL's connections).
struct GpuCalibration {
  double compute_s = 0;    // one step's GEMMs, slowest GPU
  double allreduce_s = 0;  // one step's all-reduce bytes on every GPU at once; 0 with one GPU
  std::string gpu_name;    // of the first GPU
};

struct OpenedGpuDevice {
  std::unique_ptr<StepDevice> device;
  GpuCalibration calibration;
  gpu::Dtype gemm_dtype = gpu::Dtype::bf16;  // what the GEMMs run in
  std::string dtype_fallback;                // why that is not the profile's dtype (cuBLASLt has no algorithm)
  std::string error;                         // the CUDA, cuBLASLt or NCCL call that failed
};
// `should_stop` is polled while waiting for the GPUs, so a hung all-reduce ends the run.
OpenedGpuDevice open_gpu_step_device(const GpuStepConfig& config, std::function<bool()> should_stop);

}  // namespace nodeaudit::pipeline
