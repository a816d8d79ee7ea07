// Rules of gpu.config. Expected: persistence on, ECC on, MIG off, link at its maximum generation
// and width, application clocks not locked low, the power limit at the board's default, no pending
// page retirement or row remap and no failed remap, no PCIe replays, every NVLink up (when some
// are), and a driver that supports the CUDA runtime the binary was built with.
#include "kernels/gpu/gpu_config_rules.hpp"

#include <fmt/format.h>

namespace nodeaudit::gpu {

namespace {
constexpr unsigned long long idle_bit = 0x1, applications_clocks_bit = 0x2;

void check_flag(std::vector<ConfigFinding>& out, const GpuConfigReading& g, const std::optional<bool>& value,
                bool expected, const char* what, const char* code, Severity severity, const char* why) {
  if (!value) {
    out.push_back({Severity::info, code, fmt::format("GPU {}: {} could not be read", g.index, what)});
  } else if (*value != expected) {
    out.push_back({severity, code, fmt::format("GPU {}: {} is {}; expected {} ({})", g.index, what, *value ? "on" : "off",
                                               expected ? "on" : "off", why)});
  }
}

void check_link(std::vector<ConfigFinding>& out, const GpuConfigReading& g) {
  if (!g.pcie_width_current || !g.pcie_width_max || !g.pcie_gen_current || !g.pcie_gen_max) {
    out.push_back({Severity::info, "gpu_config.pcie_link", fmt::format("GPU {}: PCIe link state could not be read", g.index)});
    return;
  }
  if (*g.pcie_width_current < *g.pcie_width_max)
    out.push_back({Severity::warn, "gpu_config.pcie_width",
                   fmt::format("GPU {}: PCIe link runs at x{}; the GPU supports x{} (reseat the card or check the riser)",
                               g.index, *g.pcie_width_current, *g.pcie_width_max)});
  if (*g.pcie_gen_current < *g.pcie_gen_max) {
    const bool idle = g.throttle_reasons && (*g.throttle_reasons & idle_bit);
    out.push_back({idle ? Severity::info : Severity::warn, "gpu_config.pcie_gen",
                   fmt::format("GPU {}: PCIe link runs at Gen{}; the GPU supports Gen{}{}", g.index, *g.pcie_gen_current,
                               *g.pcie_gen_max, idle ? " (the GPU is idle and may have lowered the link to save power; gpu.pcie measures under load)" : "")});
  }
}

void check_clocks(std::vector<ConfigFinding>& out, const GpuConfigReading& g) {
  if (!g.throttle_reasons || !(*g.throttle_reasons & applications_clocks_bit)) return;
  const std::string clocks = g.sm_clock_mhz && g.sm_clock_max_mhz
                                 ? fmt::format(" (SM clock {:.0f} MHz of {:.0f} MHz maximum)", *g.sm_clock_mhz, *g.sm_clock_max_mhz)
                                 : "";
  out.push_back({Severity::warn, "gpu_config.clocks_locked",
                 fmt::format("GPU {}: clocks are held by an application-clocks or locked-clocks setting{}; expected the "
                             "default boost behaviour (nvidia-smi -rgc / -rac)", g.index, clocks)});
}

void check_memory_repair(std::vector<ConfigFinding>& out, const GpuConfigReading& g) {
  const NvmlMemoryRepair& r = g.repair;
  if (r.retired_pages_pending.value_or(false))
    out.push_back({Severity::fail, "gpu_config.retired_pages",
                   fmt::format("GPU {}: retired pages are pending; expected none (reset the GPU to retire them)", g.index)});
  if (r.row_remap_pending.value_or(false))
    out.push_back({Severity::fail, "gpu_config.row_remap",
                   fmt::format("GPU {}: a row remap is pending; expected none (reset the GPU to apply it)", g.index)});
  if (r.row_remap_failed.value_or(false))
    out.push_back({Severity::fail, "gpu_config.row_remap_failed",
                   fmt::format("GPU {}: a row remap failed (no spare rows left in a bank); expected none: the GPU's "
                               "memory cannot repair itself any more and the board should be replaced", g.index)});
  if (r.retired_pages && *r.retired_pages > 0)
    out.push_back({Severity::info, "gpu_config.retired_page_count", fmt::format("GPU {}: {} pages retired so far", g.index, *r.retired_pages)});
  if (r.remapped_rows_correctable && r.remapped_rows_uncorrectable &&
      *r.remapped_rows_correctable + *r.remapped_rows_uncorrectable > 0)
    out.push_back({Severity::info, "gpu_config.remapped_rows",
                   fmt::format("GPU {}: {} rows remapped so far ({} after uncorrectable errors)", g.index,
                               *r.remapped_rows_correctable + *r.remapped_rows_uncorrectable, *r.remapped_rows_uncorrectable)});
  if (!r.retired_pages_pending && !r.row_remap_pending)
    out.push_back({Severity::info, "gpu_config.memory_repair",
                   fmt::format("GPU {}: pending page retirement / row remap state could not be read", g.index)});
}

// A power limit set below the board's default caps clocks under load: GEMM rates drop while every
// other reading looks healthy. 5% slack absorbs boards whose default differs from the limit by rounding.
void check_power_limit(std::vector<ConfigFinding>& out, const GpuConfigReading& g) {
  if (!g.power_limit_w || !g.power_limit_default_w) return;
  if (*g.power_limit_w < 0.95 * *g.power_limit_default_w)
    out.push_back({Severity::warn, "gpu_config.power_limit",
                   fmt::format("GPU {}: power limit is {:.0f} W; the board's default is {:.0f} W (expected the default: "
                               "nvidia-smi -pl {:.0f})", g.index, *g.power_limit_w, *g.power_limit_default_w, *g.power_limit_default_w)});
}
// A replay is a packet the link layer resent because it arrived damaged: a sound link has none, and
// a count that grows under load costs PCIe bandwidth (a marginal slot, riser, retimer or cable).
void check_pcie_replays(std::vector<ConfigFinding>& out, const GpuConfigReading& g) {
  const auto& replays = g.links.pcie_replays;
  if (!replays) {
    out.push_back({Severity::info, "gpu_config.pcie_replays",
                   fmt::format("GPU {}: PCIe replay counter could not be read (nvmlDeviceGetPcieReplayCounter): not judged", g.index)});
  } else if (*replays > 0) {
    out.push_back({Severity::warn, "gpu_config.pcie_replays",
                   fmt::format("GPU {}: {} PCIe replays since the driver loaded; expected 0: the link resent packets that arrived "
                               "damaged (reseat the card, check the riser or retimer; a count that grows during gpu.pcie costs "
                               "bandwidth)", g.index, *replays)});
  } else {
    out.push_back({Severity::info, "gpu_config.pcie_replays", fmt::format("GPU {}: 0 PCIe replays since the driver loaded; expected 0", g.index)});
  }
}

// Some links down while others are up halves (or worse) the GPU's NVLink bandwidth; none up is a
// PCIe board without a bridge as often as a fault, so it is stated, not judged.
void check_nvlinks(std::vector<ConfigFinding>& out, const GpuConfigReading& g) {
  const auto& links = g.links.nvlink_up;
  if (links.empty()) {
    out.push_back({Severity::info, "gpu_config.nvlink",
                   fmt::format("GPU {}: no NVLink state reported (a GPU without NVLink, or a driver without nvmlDeviceGetNvLinkState)", g.index)});
    return;
  }
  std::string down;
  int down_count = 0;
  for (const auto& [link, up] : links)
    if (!up) down += fmt::format("{}{}", down.empty() ? "" : ", ", link), ++down_count;
  const int total = static_cast<int>(links.size());
  if (down_count == 0) {
    out.push_back({Severity::info, "gpu_config.nvlink", fmt::format("GPU {}: all {} NVLinks up; expected all up", g.index, total)});
  } else if (down_count == total) {
    out.push_back({Severity::info, "gpu_config.nvlink",
                   fmt::format("GPU {}: none of its {} NVLinks is up: a PCIe board without an NVLink bridge, or on an SXM board a "
                               "fault (nvidia-smi nvlink -s); not judged", g.index, total)});
  } else {
    out.push_back({Severity::warn, "gpu_config.nvlink",
                   fmt::format("GPU {}: NVLink {} down ({} of {} up); expected every link up: GPU-to-GPU traffic loses that "
                               "bandwidth (reset the GPU; check nvidia-smi nvlink -s, -e; RMA if it stays down)",
                               g.index, down, total - down_count, total)});
  }
}
}  // namespace

std::vector<ConfigFinding> check_gpu_config(const GpuConfigReading& g) {
  std::vector<ConfigFinding> out;
  check_flag(out, g, g.persistence_mode, true, "persistence mode", "gpu_config.persistence", Severity::warn,
             "without it the driver re-initialises the GPU for every process");
  check_flag(out, g, g.ecc_enabled, true, "ECC", "gpu_config.ecc", Severity::warn,
             "memory errors would go undetected during training");
  check_flag(out, g, g.mig_enabled, false, "MIG mode", "gpu_config.mig", Severity::warn,
             "probes see a slice of the GPU, not the whole GPU");
  check_link(out, g);
  check_clocks(out, g);
  check_power_limit(out, g);
  check_memory_repair(out, g);
  check_pcie_replays(out, g);
  check_nvlinks(out, g);
  return out;
}

std::string format_cuda_version(int version) { return fmt::format("{}.{}", version / 1000, version % 1000 / 10); }

std::vector<ConfigFinding> check_software(const SoftwareReading& s) {
  if (!s.driver_cuda_version || !s.runtime_cuda_version)
    return {{Severity::info, "gpu_config.cuda_versions", "CUDA driver or runtime version could not be read"}};
  if (*s.driver_cuda_version < *s.runtime_cuda_version)
    return {{Severity::fail, "gpu_config.driver_too_old",
             fmt::format("the driver supports CUDA {}; this binary uses CUDA runtime {}: expected a driver for CUDA {} or "
                         "later (or the forward-compatibility package)",
                         format_cuda_version(*s.driver_cuda_version), format_cuda_version(*s.runtime_cuda_version),
                         format_cuda_version(*s.runtime_cuda_version))}};
  return {{Severity::info, "gpu_config.cuda_versions",
           fmt::format("driver supports CUDA {}, runtime CUDA {}: compatible", format_cuda_version(*s.driver_cuda_version),
                       format_cuda_version(*s.runtime_cuda_version))}};
}

std::optional<double> pcie_link_gbps(unsigned generation, unsigned width) {
  static const double per_lane_gbps[] = {0, 0.25, 0.5, 8 * 128.0 / 130 / 8, 16 * 128.0 / 130 / 8, 32 * 128.0 / 130 / 8,
                                         64 * 242.0 / 256 / 8};
  if (generation == 0 || generation >= std::size(per_lane_gbps)) return std::nullopt;
  return per_lane_gbps[generation] * width;
}

}  // namespace nodeaudit::gpu
