// NVML, loaded at run time with dlopen("libnvidia-ml.so.1") and never linked, so the binary starts
// on a machine with no NVIDIA driver. Only the few entry points nodeaudit reads are declared here.
// Every call is checked; a reading the driver does not support is simply absent (std::nullopt).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nodeaudit {

struct NvmlDeviceInfo {
  int index = 0;
  std::string name, uuid, pci_bus_id, serial;
  std::string vbios_version;  // nvmlDeviceGetVbiosVersion; "" when the driver does not say
  std::optional<unsigned long long> memory_total_bytes;
  // nvmlDeviceGetNumaNodeId: the GPU's own memory as a NUMA node (GH200/GB200 expose HBM so);
  // not where host buffers for this GPU belong. Absent on most systems.
  std::optional<int> numa_node;
  // The CPU NUMA nodes nearest the GPU (nvmlDeviceGetMemoryAffinity, node scope), lowest first:
  // where host buffers for this GPU belong. Empty when the driver does not say.
  std::vector<int> cpu_numa_nodes;
  std::optional<unsigned> pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max;
  std::optional<bool> persistence_mode, ecc_enabled, mig_enabled;
  std::optional<double> sm_clock_max_mhz;  // nvmlDeviceGetMaxClockInfo(SM)
  std::optional<double> power_limit_w;          // the enforced power limit, watts
  std::optional<double> power_limit_default_w;  // the board's default power limit, watts
};

// Memory repair state. Pre-Ampere GPUs retire pages (retired_pages, retired_pages_pending);
// Ampere and later remap rows (remapped_rows_*, row_remap_*). A GPU answers one family only.
struct NvmlMemoryRepair {
  std::optional<unsigned> retired_pages;  // both causes: multiple single-bit and double-bit ECC
  std::optional<bool> retired_pages_pending;
  std::optional<unsigned> remapped_rows_correctable, remapped_rows_uncorrectable;
  std::optional<bool> row_remap_pending, row_remap_failed;
};

// Link health. PCIe replays are packets the link had to resend (nvmlDeviceGetPcieReplayCounter,
// since the driver loaded); NVLink state per link the driver answers for (nvmlDeviceGetNvLinkState).
struct NvmlLinkHealth {
  std::optional<unsigned> pcie_replays;
  std::vector<std::pair<unsigned, bool>> nvlink_up;  // {link, up}; empty: no NVLink or the call is missing
};

struct NvmlReading {
  std::optional<double> util_pct, mem_used_bytes, power_w, temp_c, sm_clock_mhz, mem_clock_mhz;
  std::optional<double> pcie_rx_bytes_per_s, pcie_tx_bytes_per_s;
  std::optional<unsigned long long> throttle_reasons;  // bit mask, see throttle_reason_names
  std::optional<unsigned long long> ecc_volatile_uncorrected;
};

// A process with a compute context on a GPU (nvmlDeviceGetComputeRunningProcesses). The pid is in
// the driver's (host) PID namespace.
struct NvmlGpuProcess {
  unsigned pid = 0;
  std::optional<unsigned long long> used_memory_bytes;  // absent when the driver does not say (MIG, containers)
};

// The node numbers set in a node mask of unsigned longs (bit n of word n / bits-per-word is node n),
// as nvmlDeviceGetMemoryAffinity and the kernel's nodemasks lay it out; lowest first.
std::vector<int> numa_nodes_in_mask(const std::vector<unsigned long>& words);

// Names of the bits set in an NVML clocks-event (throttle) mask: "sw_power_cap", "hw_slowdown", ...
std::vector<std::string> throttle_reason_names(unsigned long long mask);

class Nvml {
 public:
  // Loads and initialises NVML. On failure `available()` is false and `why_unavailable()` says why
  // in a plain sentence ("libnvidia-ml.so.1 not found: no NVIDIA driver on this host").
  Nvml();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const;
  const std::string& why_unavailable() const { return why_; }
  int device_count() const;
  std::optional<std::string> driver_version() const;
  std::optional<std::string> cuda_driver_version() const;  // "13.0"
  NvmlDeviceInfo device_info(int index) const;
  // PCIe throughput is sampled by the driver over 20 ms per direction, so a reading with it blocks
  // for about 40 ms per GPU: only `watch`, which diagnoses PCIe-bound idle time, asks for it.
  NvmlReading read(int index, bool with_pcie_throughput = false) const;
  NvmlMemoryRepair memory_repair(int index) const;
  NvmlLinkHealth link_health(int index) const;
  // nullopt when the driver lacks the call or refuses it.
  std::optional<std::vector<NvmlGpuProcess>> compute_processes(int index) const;

 private:
  struct Api;
  std::unique_ptr<Api> api_;
  std::string why_;
};

}  // namespace nodeaudit
