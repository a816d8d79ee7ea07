// Bodies of the GPU probes, defined in the CUDA-using sources (built only with a CUDA toolkit).
// This header has no CUDA include so probe_specs.cpp compiles in every build.
#pragma once

#include "harness/core/probe.hpp"

namespace nodeaudit::gpu {

Outcome run_gemm(ProbeContext& ctx);
Outcome run_memory_bandwidth(ProbeContext& ctx);
Outcome run_memory_capacity(ProbeContext& ctx);
Outcome run_memory_integrity(ProbeContext& ctx);
Outcome run_pcie(ProbeContext& ctx);
Outcome run_stress(ProbeContext& ctx);
Outcome run_config(ProbeContext& ctx);

}  // namespace nodeaudit::gpu
