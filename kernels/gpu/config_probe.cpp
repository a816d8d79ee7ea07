// gpu.config — configuration checks read from NVML and the CUDA runtime; rules in config_rules.cpp.
// PCIe replay counts and NVLink state come from NVML here; Xid events in the kernel log are read by
// host.config, which still runs when a GPU has fallen off the bus and CUDA no longer sees it.
// Pitfall: an idle GPU lowers its PCIe generation to save power, so a low generation at idle is
// reported as info only; gpu.pcie measures the link under load.
#include <fmt/format.h>

#include "harness/node/nvml.hpp"
#include "kernels/gpu/cuda_common.hpp"
#include "kernels/gpu/gpu_config_rules.hpp"
#include "kernels/gpu/probe_bodies.hpp"

namespace nodeaudit::gpu {

Outcome run_config(ProbeContext& ctx) {
  const DeviceChoice choice = choose_devices(ctx);
  if (choice.stop) return *choice.stop;
  return guarded([&] {
    const Nvml nvml;
    SoftwareReading software;
    int version = 0;
    if (cudaDriverGetVersion(&version) == cudaSuccess) software.driver_cuda_version = version;
    if (cudaRuntimeGetVersion(&version) == cudaSuccess) software.runtime_cuda_version = version;
    std::vector<ConfigFinding> findings = check_software(software);
    if (!nvml.available()) ctx.add_finding(Severity::info, "gpu_config.nvml", "NVML unavailable: " + nvml.why_unavailable());
    for (int d : choice.devices) {
      GpuConfigReading reading;
      reading.index = d;
      reading.name = device_properties(d).name;
      int clock_khz = 0;
      if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d) == cudaSuccess && clock_khz > 0) reading.sm_clock_max_mhz = clock_khz / 1000.0;
      if (const auto index = nvml_index_for(nvml, d)) {
        const NvmlDeviceInfo info = nvml.device_info(*index);
        const NvmlReading now = nvml.read(*index);
        reading.persistence_mode = info.persistence_mode, reading.ecc_enabled = info.ecc_enabled, reading.mig_enabled = info.mig_enabled;
        reading.pcie_gen_current = info.pcie_gen_current, reading.pcie_gen_max = info.pcie_gen_max;
        reading.pcie_width_current = info.pcie_width_current, reading.pcie_width_max = info.pcie_width_max;
        reading.sm_clock_mhz = now.sm_clock_mhz, reading.throttle_reasons = now.throttle_reasons;
        if (info.sm_clock_max_mhz) reading.sm_clock_max_mhz = info.sm_clock_max_mhz;
        reading.power_limit_w = info.power_limit_w, reading.power_limit_default_w = info.power_limit_default_w;
        reading.repair = nvml.memory_repair(*index);
        reading.links = nvml.link_health(*index);
      }
      for (auto& f : check_gpu_config(reading)) findings.push_back(std::move(f));
    }
    for (auto& f : findings) ctx.add_finding(f.severity, f.code, f.message);
    return Outcome::ok();
  });
}

}  // namespace nodeaudit::gpu
