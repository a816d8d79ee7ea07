// The GPU probes' declarations: id, description, needs, parameters and deadline. Always compiled;
// without a CUDA toolkit each spec registers with not_built_reason "no CUDA toolkit" and no body.
#include <fmt/format.h>

#include "harness/core/registry.hpp"
#ifdef NODEAUDIT_GPU_BODIES
#include "kernels/gpu/probe_bodies.hpp"
#endif

namespace nodeaudit::gpu {
namespace {

ProbeSpec base_spec(std::string id, std::string description, [[maybe_unused]] ProbeBody body) {
  ProbeSpec spec;
  spec.id = std::move(id);
  spec.description = std::move(description);
  spec.needs = {Need::gpu};
#ifdef NODEAUDIT_GPU_BODIES
  spec.body = std::move(body);
#else
  spec.not_built_reason = "no CUDA toolkit";
#endif
  return spec;
}

// The body where this build has one; a macro because the body functions exist only with CUDA.
#ifdef NODEAUDIT_GPU_BODIES
#define GPU_PROBE_BODY(fn) ProbeBody(fn)
#else
#define GPU_PROBE_BODY(fn) ProbeBody()
#endif

std::function<double(const ParamValues&, Level)> level_deadline(double quick_s, double standard_s, double soak_s) {
  return [=](const ParamValues&, Level level) { return level == Level::quick ? quick_s : level == Level::standard ? standard_s : soak_s; };
}

ParamSpec duration_param(std::string name, std::array<std::string, 3> defaults, std::string help) {
  return ParamSpec{.name = std::move(name), .type = ParamType::duration, .default_by_level = std::move(defaults),
                   .help = std::move(help), .min = 1, .max = 7 * 24 * 3600.0};
}

ProbeSpec gemm_spec() {
  ProbeSpec spec = base_spec("gpu.gemm", "cuBLASLt matmul per dtype on every selected GPU at once (TFLOP/s, % of datasheet peak)",
                             GPU_PROBE_BODY(run_gemm));
  spec.params = {
      ParamSpec{.name = "dtypes", .type = ParamType::text, .default_by_level = same_at_all_levels("fp64,fp32,tf32,fp16,bf16,fp8"),
                .help = "Comma-separated dtypes: fp64,fp32,tf32,fp16,bf16,fp8 (fp8 = e4m3, sm_89+)"},
      ParamSpec{.name = "size", .type = ParamType::integer, .default_by_level = {"8192", "8192", "16384"},
                .help = "Base M=N=K of the shape search; candidates are 0.5x, 1x, 1.5x and tall/wide 2x",
                .min = 256, .max = 65536, .multiple_of = 256},
  };
  spec.deadline_s = level_deadline(300, 900, 3600);
  return spec;
}

ProbeSpec memory_bandwidth_spec() {
  ProbeSpec spec = base_spec("gpu.memory-bandwidth", "Device-memory copy and triad over buffers far larger than L2 (GB/s)",
                             GPU_PROBE_BODY(run_memory_bandwidth));
  spec.params = {ParamSpec{.name = "buffer-size", .type = ParamType::size, .default_by_level = same_at_all_levels("4GiB"),
                           .help = "Bytes per array (copy uses 2, triad 3); must fit in free GPU memory", .min = 64 << 20,
                           .max = 1ull << 40}};
  spec.deadline_s = level_deadline(180, 600, 3600);
  return spec;
}

ProbeSpec memory_capacity_spec() {
  ProbeSpec spec = base_spec("gpu.memory-capacity", "OOM edge: largest single cudaMalloc and total allocatable in chunks (bytes)",
                             GPU_PROBE_BODY(run_memory_capacity));
  spec.params = {ParamSpec{.name = "chunk-size", .type = ParamType::size, .default_by_level = same_at_all_levels("1GiB"),
                           .help = "First chunk size of the chunked allocation (halved down to 2 MiB at the edge)",
                           .min = 2 << 20, .max = 1ull << 40}};
  spec.deadline_s = level_deadline(120, 300, 600);
  return spec;
}

ProbeSpec memory_integrity_spec() {
  ProbeSpec spec = base_spec("gpu.memory-integrity", "memtest patterns (own address, walking ones, random) over all allocatable GPU memory",
                             GPU_PROBE_BODY(run_memory_integrity));
  spec.params = {
      ParamSpec{.name = "passes", .type = ParamType::integer, .default_by_level = {"1", "2", "1000000"},
                .help = "Passes over all patterns (at soak level the loop runs for --duration)", .min = 1, .max = 1000000},
      duration_param("duration", {"60s", "5m", "1h"}, "Time budget (at the quick level split over the rounds); the test stops after the pass that crosses it"),
  };
  spec.deadline_s = [](const ParamValues& p, Level) { return p.duration_s("duration") * 1.5 + 300; };
  return spec;
}

ProbeSpec pcie_spec() {
  ProbeSpec spec = base_spec("gpu.pcie", "Host-to-device and device-to-host copies, pinned and pageable, per GPU and all at once (GB/s)",
                             GPU_PROBE_BODY(run_pcie));
  spec.params = {ParamSpec{.name = "transfer-size", .type = ParamType::size, .default_by_level = same_at_all_levels("256MiB"),
                           .help = "Bytes per copy", .min = 1 << 20, .max = 64ull << 30}};
  spec.deadline_s = level_deadline(180, 600, 1800);
  return spec;
}

ProbeSpec stress_spec() {
  ProbeSpec spec = base_spec("gpu.stress", "Sustained verified GEMM on all GPUs with clocks, power, temperature and throttle watched",
                             GPU_PROBE_BODY(run_stress));
  spec.params = {
      duration_param("duration", {"30s", "5m", "2h"}, "How long to keep every GPU busy"),
      duration_param("interval", {"10s", "30s", "60s"}, "Length of one measured and verified interval"),
      ParamSpec{.name = "dtype", .type = ParamType::choice, .default_by_level = same_at_all_levels("bf16"),
                .help = "GEMM dtype", .choices = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"}},
      ParamSpec{.name = "size", .type = ParamType::integer, .default_by_level = same_at_all_levels("8192"),
                .help = "M=N=K of the sustained GEMM", .min = 256, .max = 65536, .multiple_of = 256},
  };
  spec.deadline_s = [](const ParamValues& p, Level) { return p.duration_s("duration") * 1.2 + 2 * p.duration_s("interval") + 120; };
  return spec;
}

ProbeSpec config_spec() {
  ProbeSpec spec = base_spec("gpu.config", "GPU configuration checks: persistence, ECC, MIG, PCIe link, clocks, memory repair, CUDA versions",
                             GPU_PROBE_BODY(run_config));
  spec.deadline_s = level_deadline(60, 60, 60);
  return spec;
}

const ProbeRegistrar gemm_registrar{gemm_spec()};
const ProbeRegistrar memory_bandwidth_registrar{memory_bandwidth_spec()};
const ProbeRegistrar memory_capacity_registrar{memory_capacity_spec()};
const ProbeRegistrar memory_integrity_registrar{memory_integrity_spec()};
const ProbeRegistrar pcie_registrar{pcie_spec()};
const ProbeRegistrar stress_registrar{stress_spec()};
const ProbeRegistrar config_registrar{config_spec()};

}  // namespace
}  // namespace nodeaudit::gpu
