// Datasheet peaks (dense, no sparsity) of the GPU the CUDA runtime names, from the one GPU table
// (harness/score/gpu_table.hpp). An unknown device has no entry: pct_of_peak is then omitted, never
// guessed.
#pragma once

#include <optional>
#include <string>

#include "kernels/gpu/gemm_plan.hpp"

namespace nodeaudit::gpu {

std::optional<double> peak_tflops(const std::string& device_name, Dtype dtype);
std::optional<double> peak_memory_gbps(const std::string& device_name);
// measured / peak * 100, or std::nullopt when the peak is unknown.
std::optional<double> percent_of_peak(double measured, std::optional<double> peak);

}  // namespace nodeaudit::gpu
