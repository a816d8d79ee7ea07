// gpu.config rules on recorded values (NVML and CUDA runtime readings), pure so they are tested on a
// CPU. Each rule yields a finding that says what was read and what is expected.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/core/metric.hpp"
#include "harness/node/nvml.hpp"

namespace nodeaudit::gpu {

struct GpuConfigReading {
  int index = 0;
  std::string name;
  std::optional<bool> persistence_mode, ecc_enabled, mig_enabled;
  std::optional<unsigned> pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max;
  std::optional<double> sm_clock_mhz;                   // current SM clock
  std::optional<double> sm_clock_max_mhz;               // the device's maximum SM clock
  std::optional<unsigned long long> throttle_reasons;   // NVML clocks-event mask
  std::optional<double> power_limit_w, power_limit_default_w;
  NvmlMemoryRepair repair;                              // page retirement (pre-Ampere) / row remap (Ampere+)
  NvmlLinkHealth links;                                 // PCIe replay count, NVLink state per link
};

struct SoftwareReading {
  std::optional<int> driver_cuda_version;   // cudaDriverGetVersion: 13000 = 13.0
  std::optional<int> runtime_cuda_version;  // cudaRuntimeGetVersion
};

struct ConfigFinding {
  Severity severity = Severity::info;
  std::string code, message;
};

std::vector<ConfigFinding> check_gpu_config(const GpuConfigReading& gpu);
std::vector<ConfigFinding> check_software(const SoftwareReading& software);
std::string format_cuda_version(int version);  // 12040 -> "12.4"

// Usable bandwidth of one direction of a PCIe link after line encoding, decimal GB/s
// (Gen3: 8 GT/s * 128/130 / 8 = 0.985 GB/s per lane). std::nullopt for an unknown generation.
std::optional<double> pcie_link_gbps(unsigned generation, unsigned width);

}  // namespace nodeaudit::gpu
