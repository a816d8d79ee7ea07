#include "harness/node/nvml.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

namespace nodeaudit {
namespace {

// ABI of the few NVML entry points used (stable across driver releases).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t nvml_success = 0;
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlUtilization_t {
  unsigned gpu, memory;
};
constexpr int temperature_gpu = 0;
constexpr int clock_sm = 1, clock_mem = 2;
constexpr int ecc_uncorrected = 1, ecc_volatile = 0;
constexpr int pcie_tx = 0, pcie_rx = 1;
constexpr nvmlReturn_t nvml_insufficient_size = 7;  // a page-count query with a zero-sized buffer
constexpr int retirement_multiple_single_bit = 0, retirement_double_bit = 1;
constexpr int affinity_scope_node = 0;          // NVML_AFFINITY_SCOPE_NODE
constexpr unsigned nvlink_max_links = 18;       // NVML_NVLINK_MAX_LINKS
constexpr unsigned max_numa_nodes = 1024;       // the kernel's largest MAX_NUMNODES
constexpr int feature_enabled = 1;              // NVML_FEATURE_ENABLED
// nvmlProcessInfo_t as the _v2 and _v3 process queries fill it.
struct nvmlProcessInfo_t {
  unsigned pid;
  unsigned long long usedGpuMemory;  // NVML_VALUE_NOT_AVAILABLE (all ones) when unknown
  unsigned gpuInstanceId, computeInstanceId;
};
constexpr unsigned long long nvml_value_not_available = ~0ULL;
constexpr unsigned max_gpu_processes = 256;

template <typename Fn>
Fn load(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

}  // namespace

// The member types come from this file's anonymous namespace; GCC warns about that when the file is
// compiled inside a unity batch (it is then not the main file), though the type is still used here only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsubobject-linkage"
struct Nvml::Api {
  void* lib = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*serial)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*vbios)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*driver)(char*, unsigned) = nullptr;
  nvmlReturn_t (*cuda_driver)(int*) = nullptr;
  nvmlReturn_t (*numa)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*gen_cur)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*gen_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*width_cur)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*width_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*persistence)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*ecc_mode)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*ecc_count)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*pcie_throughput)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*power_limit_default)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*retired_pages)(nvmlDevice_t, int, unsigned*, unsigned long long*) = nullptr;
  nvmlReturn_t (*retired_pending)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*remapping)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*memory_affinity)(nvmlDevice_t, unsigned, unsigned long*, int) = nullptr;
  nvmlReturn_t (*pcie_replays)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*compute_processes)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*) = nullptr;

  nvmlDevice_t device(int index) const {
    nvmlDevice_t d = nullptr;
    if (handle(static_cast<unsigned>(index), &d) != nvml_success) return nullptr;
    return d;
  }
};
#pragma GCC diagnostic pop

namespace {

// The loader's search path first; then where the NVIDIA container toolkit and Kubernetes GPU device
// plugins mount the driver's libraries, a folder that is often not on that path in such a container.
constexpr const char* nvml_fallback_path = "/usr/local/nvidia/lib64/libnvidia-ml.so.1";

void* open_nvml() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  return lib != nullptr ? lib : dlopen(nvml_fallback_path, RTLD_NOW | RTLD_LOCAL);
}

}  // namespace

Nvml::Nvml() {
  void* lib = open_nvml();
  if (lib == nullptr) {
    why_ = "no NVIDIA driver (libnvidia-ml.so.1 could not be loaded)";
    return;
  }
  auto api = std::make_unique<Api>();
  api->lib = lib;
  api->init = load<decltype(api->init)>(lib, "nvmlInit_v2");
  api->shutdown = load<decltype(api->shutdown)>(lib, "nvmlShutdown");
  api->error_string = load<decltype(api->error_string)>(lib, "nvmlErrorString");
  api->count = load<decltype(api->count)>(lib, "nvmlDeviceGetCount_v2");
  api->handle = load<decltype(api->handle)>(lib, "nvmlDeviceGetHandleByIndex_v2");
  if (!api->init || !api->shutdown || !api->count || !api->handle || !api->error_string) {
    why_ = "libnvidia-ml.so.1 lacks nvmlInit_v2 / nvmlDeviceGetCount_v2 (driver too old)";
    dlclose(lib);
    return;
  }
  api->name = load<decltype(api->name)>(lib, "nvmlDeviceGetName");
  api->uuid = load<decltype(api->uuid)>(lib, "nvmlDeviceGetUUID");
  api->serial = load<decltype(api->serial)>(lib, "nvmlDeviceGetSerial");
  api->vbios = load<decltype(api->vbios)>(lib, "nvmlDeviceGetVbiosVersion");
  api->pci = load<decltype(api->pci)>(lib, "nvmlDeviceGetPciInfo_v3");
  api->memory = load<decltype(api->memory)>(lib, "nvmlDeviceGetMemoryInfo");
  api->driver = load<decltype(api->driver)>(lib, "nvmlSystemGetDriverVersion");
  api->cuda_driver = load<decltype(api->cuda_driver)>(lib, "nvmlSystemGetCudaDriverVersion_v2");
  api->numa = load<decltype(api->numa)>(lib, "nvmlDeviceGetNumaNodeId");
  api->gen_cur = load<decltype(api->gen_cur)>(lib, "nvmlDeviceGetCurrPcieLinkGeneration");
  api->gen_max = load<decltype(api->gen_max)>(lib, "nvmlDeviceGetMaxPcieLinkGeneration");
  api->width_cur = load<decltype(api->width_cur)>(lib, "nvmlDeviceGetCurrPcieLinkWidth");
  api->width_max = load<decltype(api->width_max)>(lib, "nvmlDeviceGetMaxPcieLinkWidth");
  api->persistence = load<decltype(api->persistence)>(lib, "nvmlDeviceGetPersistenceMode");
  api->ecc_mode = load<decltype(api->ecc_mode)>(lib, "nvmlDeviceGetEccMode");
  api->mig_mode = load<decltype(api->mig_mode)>(lib, "nvmlDeviceGetMigMode");
  api->utilization = load<decltype(api->utilization)>(lib, "nvmlDeviceGetUtilizationRates");
  api->power = load<decltype(api->power)>(lib, "nvmlDeviceGetPowerUsage");
  api->temperature = load<decltype(api->temperature)>(lib, "nvmlDeviceGetTemperature");
  api->clock = load<decltype(api->clock)>(lib, "nvmlDeviceGetClockInfo");
  api->throttle = load<decltype(api->throttle)>(lib, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!api->throttle) api->throttle = load<decltype(api->throttle)>(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
  api->ecc_count = load<decltype(api->ecc_count)>(lib, "nvmlDeviceGetTotalEccErrors");
  api->pcie_throughput = load<decltype(api->pcie_throughput)>(lib, "nvmlDeviceGetPcieThroughput");
  api->max_clock = load<decltype(api->max_clock)>(lib, "nvmlDeviceGetMaxClockInfo");
  api->power_limit = load<decltype(api->power_limit)>(lib, "nvmlDeviceGetEnforcedPowerLimit");
  api->power_limit_default = load<decltype(api->power_limit_default)>(lib, "nvmlDeviceGetPowerManagementDefaultLimit");
  api->retired_pages = load<decltype(api->retired_pages)>(lib, "nvmlDeviceGetRetiredPages");
  api->retired_pending = load<decltype(api->retired_pending)>(lib, "nvmlDeviceGetRetiredPagesPendingStatus");
  api->remapping = load<decltype(api->remapping)>(lib, "nvmlDeviceGetRemappingInfo");
  api->memory_affinity = load<decltype(api->memory_affinity)>(lib, "nvmlDeviceGetMemoryAffinity");
  api->pcie_replays = load<decltype(api->pcie_replays)>(lib, "nvmlDeviceGetPcieReplayCounter");
  api->nvlink_state = load<decltype(api->nvlink_state)>(lib, "nvmlDeviceGetNvLinkState");
  api->compute_processes = load<decltype(api->compute_processes)>(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!api->compute_processes)
    api->compute_processes = load<decltype(api->compute_processes)>(lib, "nvmlDeviceGetComputeRunningProcesses_v2");
  const nvmlReturn_t rc = api->init();
  if (rc != nvml_success) {
    why_ = fmt::format("nvmlInit_v2 failed: {} (code {})", api->error_string(rc), rc);
    dlclose(lib);
    return;
  }
  api_ = std::move(api);
}

Nvml::~Nvml() {
  if (api_) {
    api_->shutdown();
    dlclose(api_->lib);
  }
}

bool Nvml::available() const { return api_ != nullptr; }

int Nvml::device_count() const {
  unsigned n = 0;
  if (!api_ || api_->count(&n) != nvml_success) return 0;
  return static_cast<int>(n);
}

std::optional<std::string> Nvml::driver_version() const {
  char buf[96] = {};
  if (!api_ || !api_->driver || api_->driver(buf, sizeof buf) != nvml_success) return std::nullopt;
  return std::string(buf);
}

std::optional<std::string> Nvml::cuda_driver_version() const {
  int v = 0;
  if (!api_ || !api_->cuda_driver || api_->cuda_driver(&v) != nvml_success) return std::nullopt;
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

namespace {
template <typename Fn>
std::optional<unsigned> read_unsigned(Fn fn, nvmlDevice_t d) {
  unsigned v = 0;
  if (fn == nullptr || fn(d, &v) != nvml_success) return std::nullopt;
  return v;
}
template <typename Fn>
std::string read_text(Fn fn, nvmlDevice_t d) {
  char buf[96] = {};
  if (fn == nullptr || fn(d, buf, sizeof buf) != nvml_success) return {};
  return buf;
}
}  // namespace

NvmlDeviceInfo Nvml::device_info(int index) const {
  NvmlDeviceInfo info;
  info.index = index;
  nvmlDevice_t d = api_ ? api_->device(index) : nullptr;
  if (d == nullptr) return info;
  info.name = read_text(api_->name, d);
  info.uuid = read_text(api_->uuid, d);
  info.serial = read_text(api_->serial, d);
  info.vbios_version = read_text(api_->vbios, d);
  nvmlPciInfo_t pci{};
  if (api_->pci && api_->pci(d, &pci) == nvml_success) info.pci_bus_id = pci.busId;
  nvmlMemory_t mem{};
  if (api_->memory && api_->memory(d, &mem) == nvml_success) info.memory_total_bytes = mem.total;
  if (auto numa = read_unsigned(api_->numa, d)) info.numa_node = static_cast<int>(*numa);
  if (api_->memory_affinity) {
    std::vector<unsigned long> node_mask(max_numa_nodes / (8 * sizeof(unsigned long)), 0);
    if (api_->memory_affinity(d, static_cast<unsigned>(node_mask.size()), node_mask.data(), affinity_scope_node) == nvml_success)
      info.cpu_numa_nodes = numa_nodes_in_mask(node_mask);
  }
  info.pcie_gen_current = read_unsigned(api_->gen_cur, d);
  info.pcie_gen_max = read_unsigned(api_->gen_max, d);
  info.pcie_width_current = read_unsigned(api_->width_cur, d);
  info.pcie_width_max = read_unsigned(api_->width_max, d);
  int mode = 0, pending = 0;
  if (api_->persistence && api_->persistence(d, &mode) == nvml_success) info.persistence_mode = mode != 0;
  if (api_->ecc_mode && api_->ecc_mode(d, &mode, &pending) == nvml_success) info.ecc_enabled = mode != 0;
  unsigned mig = 0, mig_pending = 0;
  if (api_->mig_mode && api_->mig_mode(d, &mig, &mig_pending) == nvml_success) info.mig_enabled = mig != 0;
  unsigned v = 0;
  if (api_->max_clock && api_->max_clock(d, clock_sm, &v) == nvml_success) info.sm_clock_max_mhz = v;
  if (auto mw = read_unsigned(api_->power_limit, d)) info.power_limit_w = *mw / 1000.0;
  if (auto mw = read_unsigned(api_->power_limit_default, d)) info.power_limit_default_w = *mw / 1000.0;
  return info;
}

NvmlMemoryRepair Nvml::memory_repair(int index) const {
  NvmlMemoryRepair repair;
  nvmlDevice_t d = api_ ? api_->device(index) : nullptr;
  if (d == nullptr) return repair;
  if (api_->retired_pages) {
    // A zero-sized buffer asks only for the count: NVML answers success (no pages) or
    // insufficient-size with the count filled in. Anything else (not supported) leaves it absent.
    unsigned total = 0;
    bool known = true;
    for (int cause : {retirement_multiple_single_bit, retirement_double_bit}) {
      unsigned count = 0;
      const nvmlReturn_t rc = api_->retired_pages(d, cause, &count, nullptr);
      if (rc != nvml_success && rc != nvml_insufficient_size) known = false;
      total += count;
    }
    if (known) repair.retired_pages = total;
  }
  int pending = 0;
  if (api_->retired_pending && api_->retired_pending(d, &pending) == nvml_success) repair.retired_pages_pending = pending != 0;
  unsigned correctable = 0, uncorrectable = 0, remap_pending = 0, failed = 0;
  if (api_->remapping && api_->remapping(d, &correctable, &uncorrectable, &remap_pending, &failed) == nvml_success) {
    repair.remapped_rows_correctable = correctable, repair.remapped_rows_uncorrectable = uncorrectable;
    repair.row_remap_pending = remap_pending != 0, repair.row_remap_failed = failed != 0;
  }
  return repair;
}

NvmlLinkHealth Nvml::link_health(int index) const {
  NvmlLinkHealth health;
  nvmlDevice_t d = api_ ? api_->device(index) : nullptr;
  if (d == nullptr) return health;
  health.pcie_replays = read_unsigned(api_->pcie_replays, d);
  // A link the GPU does not have answers not-supported or invalid-argument: it is left out.
  for (unsigned link = 0; api_->nvlink_state && link < nvlink_max_links; ++link) {
    int state = 0;
    if (api_->nvlink_state(d, link, &state) == nvml_success) health.nvlink_up.emplace_back(link, state == feature_enabled);
  }
  return health;
}

std::optional<std::vector<NvmlGpuProcess>> Nvml::compute_processes(int index) const {
  nvmlDevice_t d = api_ ? api_->device(index) : nullptr;
  if (d == nullptr || !api_->compute_processes) return std::nullopt;
  std::vector<nvmlProcessInfo_t> infos(max_gpu_processes);
  unsigned count = max_gpu_processes;
  if (api_->compute_processes(d, &count, infos.data()) != nvml_success) return std::nullopt;
  std::vector<NvmlGpuProcess> out;
  for (unsigned i = 0; i < count && i < max_gpu_processes; ++i) {
    NvmlGpuProcess p{infos[i].pid, std::nullopt};
    if (infos[i].usedGpuMemory != nvml_value_not_available) p.used_memory_bytes = infos[i].usedGpuMemory;
    out.push_back(p);
  }
  return out;
}

NvmlReading Nvml::read(int index, bool with_pcie_throughput) const {
  NvmlReading r;
  nvmlDevice_t d = api_ ? api_->device(index) : nullptr;
  if (d == nullptr) return r;
  nvmlUtilization_t util{};
  if (api_->utilization && api_->utilization(d, &util) == nvml_success) r.util_pct = util.gpu;
  nvmlMemory_t mem{};
  if (api_->memory && api_->memory(d, &mem) == nvml_success) r.mem_used_bytes = static_cast<double>(mem.used);
  if (auto mw = read_unsigned(api_->power, d)) r.power_w = *mw / 1000.0;
  unsigned v = 0;
  if (api_->temperature && api_->temperature(d, temperature_gpu, &v) == nvml_success) r.temp_c = v;
  if (api_->clock && api_->clock(d, clock_sm, &v) == nvml_success) r.sm_clock_mhz = v;
  if (api_->clock && api_->clock(d, clock_mem, &v) == nvml_success) r.mem_clock_mhz = v;
  // NVML reports PCIe throughput in KB/s over a 20 ms window.
  if (with_pcie_throughput && api_->pcie_throughput) {
    if (api_->pcie_throughput(d, pcie_rx, &v) == nvml_success) r.pcie_rx_bytes_per_s = v * 1000.0;
    if (api_->pcie_throughput(d, pcie_tx, &v) == nvml_success) r.pcie_tx_bytes_per_s = v * 1000.0;
  }
  unsigned long long mask = 0;
  if (api_->throttle && api_->throttle(d, &mask) == nvml_success) r.throttle_reasons = mask;
  unsigned long long ecc = 0;
  if (api_->ecc_count && api_->ecc_count(d, ecc_uncorrected, ecc_volatile, &ecc) == nvml_success)
    r.ecc_volatile_uncorrected = ecc;
  return r;
}

std::vector<int> numa_nodes_in_mask(const std::vector<unsigned long>& words) {
  constexpr unsigned bits_per_word = 8 * sizeof(unsigned long);
  std::vector<int> nodes;
  for (std::size_t w = 0; w < words.size(); ++w)
    for (unsigned bit = 0; bit < bits_per_word; ++bit)
      if (words[w] & (1ul << bit)) nodes.push_back(static_cast<int>(w * bits_per_word + bit));
  return nodes;
}

std::vector<std::string> throttle_reason_names(unsigned long long mask) {
  static const std::pair<unsigned long long, const char*> bits[] = {
      {0x1, "gpu_idle"},          {0x2, "applications_clocks"}, {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},       {0x10, "sync_boost"},         {0x20, "sw_thermal"},
      {0x40, "hw_thermal"},       {0x80, "hw_power_brake"},     {0x100, "display_clocks"}};
  std::vector<std::string> names;
  for (const auto& [bit, name] : bits)
    if (mask & bit) names.emplace_back(name);
  return names;
}

}  // namespace nodeaudit
