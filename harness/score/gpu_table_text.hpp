// The GPU table as people and programs read it: `nodeaudit profiles gpus` (one line a model, or
// every figure of one model with its source) and the JSON of a model's figures that the
// assessment's target_gpus block carries.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/score/gpu_table.hpp"

namespace nodeaudit::score {

// {gemm_tflops_<dtype>, memory_bytes, memory_bandwidth_gbps, h2d_gbps: {value, unit, source, kind},
//  allreduce_busbw: {points: [{bytes, busbw_gbps}], gpus_measured, source, kind}}
nlohmann::json gpu_model_figures(const GpuModel& model);
std::string render_gpu_table();                      // one line a model
std::string render_gpu_model(const GpuModel& model);  // every figure with its source

}  // namespace nodeaudit::score
