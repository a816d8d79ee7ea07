// The GPU probes' figures: what each one records, in which unit, and which way is better.
// Dependency-free (figures.hpp only): compiled into the probe catalogue that the scorer and the
// reporters link, with or without a CUDA toolkit.
#include "harness/core/figures.hpp"

namespace nodeaudit {

std::vector<ProbeFigures> gpu_probe_figures() {
  const Better higher = Better::higher, lower = Better::lower;
  return {
      {"gpu.gemm",
       "Matrix-multiply throughput per GPU and dtype (TFLOP/s, higher is better) and its share of the "
       "datasheet peak; spread_pct is how far the slowest GPU trails the fastest.",
       ProbeRole::measurement,
       {{"tflops", unit::tflops, higher, {"gpu", "dtype"}, "cuBLASLt matmul rate of the best shape, 2*M*N*K FLOP per call"},
        {"pct_of_peak", unit::percent, higher, {"gpu", "dtype"}, "the median rate as a share of the GPU's datasheet peak for the dtype"},
        {"spread_pct", unit::percent, lower, {"dtype"}, "how far the slowest GPU's median trails the fastest's"}},
       "`dtype`: fp64, fp32, tf32, fp16, bf16 or fp8."},
      {"gpu.memory-bandwidth",
       "Device-memory (HBM) copy and triad bandwidth per GPU over buffers far larger than L2 "
       "(decimal GB/s, higher is better).",
       ProbeRole::measurement,
       {{"bandwidth", unit::gbps, higher, {"gpu", "kernel"}, "bytes read + written per second by the copy or triad kernel"},
        {"pct_of_peak", unit::percent, higher, {"gpu", "kernel"}, "the median bandwidth as a share of the datasheet peak"}},
       "`kernel`: copy or triad."},
      {"gpu.memory-capacity",
       "GPU memory one process can allocate: total in chunks and the largest single "
       "allocation, per GPU (bytes, higher is better).",
       ProbeRole::measurement,
       {{"usable_bytes", unit::bytes, higher, {"gpu"}, "total one process allocated in chunks, halving at the edge"},
        {"largest_alloc_bytes", unit::bytes, higher, {"gpu"}, "the largest single cudaMalloc that succeeded"},
        {"total_bytes", unit::bytes, higher, {"gpu"}, "the device's total memory"}}},
      {"gpu.memory-integrity",
       "Memory test patterns over the allocatable GPU memory: bytes tested and errors found "
       "(any error is a fault).",
       ProbeRole::measurement,
       {{"bytes_tested", unit::bytes, higher, {"gpu"}, "bytes written and read back over all passes"},
        {"errors", unit::count, lower, {"gpu"}, "words that did not read back as written"}},
       "Info: `info.margin_bytes` (left free for the driver, 256 MiB), `info.bytes_held.<gpu>`, "
       "`info.untested_bytes.<gpu>` (total - held: the margin, the CUDA context, other processes); finding "
       "`gpu_memory.untested`."},
      {"gpu.pcie",
       "Host-to-device and device-to-host copy bandwidth per GPU, pinned and pageable, one GPU at a "
       "time and all at once (decimal GB/s, higher is better).",
       ProbeRole::measurement,
       {{"h2d_bandwidth", unit::gbps, higher, {"gpu", "memory", "mode"}, "host-to-device copy bytes per second"},
        {"d2h_bandwidth", unit::gbps, higher, {"gpu", "memory", "mode"}, "device-to-host copy bytes per second"},
        {"h2d_pct_of_link", unit::percent, higher, {"gpu", "memory", "mode"}, "the median host-to-device rate as a share of the link's encoded one-direction rate at its maximum generation and width; present when NVML gives the link"},
        {"d2h_pct_of_link", unit::percent, higher, {"gpu", "memory", "mode"}, "the median device-to-host rate as a share of the link's encoded one-direction rate at its maximum generation and width; present when NVML gives the link"}},
       "`memory`: pinned or pageable; `mode`: single (one GPU at a time) or concurrent (all at once). Info: "
       "`info.host_memory.<gpu>` = `requested_numa_node` (the CPU node nearest the GPU: NVML memory affinity, else "
       "the PCI device's sysfs node; a memory-only node is never requested), `numa_node_source`, `placed_numa_node` "
       "(null: unknown), `placement_not_applied` (present when mbind was refused, e.g. by a container's seccomp "
       "profile: the figures stand, the placement was the kernel's)."},
      {"gpu.stress",
       "Sustained verified GEMM with clocks watched: sustained TFLOP/s, the drop from the first "
       "minute and the share of time throttled (lower drop and throttle are better).",
       ProbeRole::measurement,
       {{"sustained_tflops", unit::tflops, higher, {"gpu"}, "verified GEMM rate per measured interval"},
        {"drop_pct", unit::percent, lower, {"gpu"}, "how much the last interval's rate lost against the first's"},
        {"throttle_pct", unit::percent, lower, {"gpu"}, "share of telemetry samples with a clock-costing throttle reason (power cap, slowdown, thermal, power brake)"}}},
      {"gpu.config",
       "GPU configuration checks: persistence, ECC, MIG, PCIe link, clocks, memory repair, CUDA "
       "versions (findings, no figures).",
       ProbeRole::configuration_audit,
       {},
       "Among the findings, per GPU: `gpu_config.pcie_replays` (NVML's replay count since the driver loaded: warn "
       "above 0, `not judged` when unreadable) and `gpu_config.nvlink` (NVML link state: warn when some links are "
       "down while others are up; all up, none up or none reported is info)."},
  };
}

}  // namespace nodeaudit
