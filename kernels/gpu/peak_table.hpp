// Datasheet peaks (dense, no sparsity) keyed by the exact device name the CUDA runtime reports.
// An unknown device has no entry: pct_of_peak is then omitted, never guessed.
#pragma once

#include <optional>
#include <string>

#include "gemm_plan.hpp"

namespace nodeaudit::gpu {

struct DevicePeaks {
  const char* device_name;  // cudaDeviceProp::name, e.g. "NVIDIA H200"
  double fp64_tflops, fp32_tflops, tf32_tflops, fp16_tflops, bf16_tflops;
  std::optional<double> fp8_tflops;  // absent where the GPU has no fp8 tensor cores
  double memory_gbps;                // HBM bandwidth, decimal GB/s
};

const DevicePeaks* find_device_peaks(const std::string& device_name);
std::optional<double> peak_tflops(const std::string& device_name, Dtype dtype);
std::optional<double> peak_memory_gbps(const std::string& device_name);
// measured / peak * 100, or std::nullopt when the peak is unknown.
std::optional<double> percent_of_peak(double measured, std::optional<double> peak);

}  // namespace nodeaudit::gpu
