// host.config rules on the IOMMU and on how CPUs and host RAM compare with the GPUs (see config_rules.hpp).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "harness/node/procfs.hpp"
#include "hostconfig/config_rules.hpp"
#include "hostconfig/kernel_log.hpp"
#include "hostconfig/xid_events.hpp"

namespace nodeaudit::host {
namespace {

namespace fs = std::filesystem;

constexpr double min_ram_to_gpu_memory = 2.0;  // seed rule: host RAM 2-4x the total GPU memory
constexpr double min_cores_per_gpu = 4.0;      // seed rule: plan 4-8 CPU cores per GPU


std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The IOMMU-related options on the kernel command line ("intel_iommu=on iommu=pt"), or "".
std::string iommu_options(const std::string& cmdline) {
  std::istringstream words(cmdline);
  std::string word, options;
  while (words >> word)
    if (word.rfind("iommu", 0) == 0 || word.rfind("intel_iommu", 0) == 0 || word.rfind("amd_iommu", 0) == 0)
      options += (options.empty() ? "" : " ") + word;
  return options;
}

bool has_word(const std::string& options, const std::string& word) {
  std::istringstream words(options);
  std::string w;
  while (words >> w)
    if (w == word) return true;
  return false;
}

std::size_t count_entries(const std::string& dir) {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) ++n;
  return n;
}

// Default-domain types of the IOMMU groups: "identity" (passthrough), "DMA" / "DMA-FQ" (translated).
std::map<std::string, int> group_types(const std::string& groups_dir) {
  std::map<std::string, int> types;
  std::error_code ec;
  for (auto it = fs::directory_iterator(groups_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (auto type = procfs::read_first_line((it->path() / "type").string())) ++types[*type];
  return types;
}

std::string tally(const std::map<std::string, int>& counts) {
  std::string out;
  for (const auto& [name, n] : counts) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, name);
  return out;
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::istringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    int lo = 0, hi = 0;
    char dash = 0;
    std::istringstream range(item);
    if (!(range >> lo)) return {};
    hi = lo;
    if (range >> dash && (dash != '-' || !(range >> hi) || hi < lo)) return {};
    for (int cpu = lo; cpu <= hi; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

Finding check_iommu(const std::string& cmdline_path, const std::string& iommu_class_dir, const std::string& iommu_groups_dir,
                    const ContainerInfo& container) {
  const std::string options = iommu_options(read_all(cmdline_path));
  const std::string cmdline_text = options.empty() ? fmt::format("no IOMMU options in {}", cmdline_path) : fmt::format("{} has '{}'", cmdline_path, options);
  const std::size_t units = count_entries(iommu_class_dir);
  const std::string expected = "expected off or passthrough (iommu=pt) on a GPU node";
  // A container's /sys may hide the host's IOMMU units; no unit there is not proof that none is active.
  if (units == 0 && container.detected)
    return info("host_config.iommu", fmt::format("not judged (in a container: no IOMMU units visible in {}, which may hide the host's; {}); "
                                                 "check `ls /sys/class/iommu` and /proc/cmdline on the host; {}",
                                                 iommu_class_dir, cmdline_text, expected));
  if (units == 0)
    return info("host_config.iommu", fmt::format("IOMMU not active: no units in {} ({}); {}", iommu_class_dir, cmdline_text, expected));
  const std::map<std::string, int> types = group_types(iommu_groups_dir);
  const bool pt_option = has_word(options, "iommu=pt") || has_word(options, "iommu.passthrough=1");
  const bool groups_identity = !types.empty() && types.size() == 1 && types.begin()->first == "identity";
  const std::string read = fmt::format("{} unit(s) in {}, groups in {}: {}; {}", units, iommu_class_dir, iommu_groups_dir,
                                       types.empty() ? "type not readable" : tally(types), cmdline_text);
  if (groups_identity || (types.empty() && pt_option))
    return info("host_config.iommu", fmt::format("IOMMU in passthrough mode ({}); {}", read, expected));
  return warn("host_config.iommu", fmt::format("IOMMU translates device DMA ({}); {}: translation adds IOTLB misses to every PCIe "
                                               "transfer and can block GPU peer-to-peer and GPUDirect RDMA",
                                               read, expected));
}

Finding check_host_ram_vs_gpu_memory(const std::string& meminfo_path, const GpuInventory& gpus, const ContainerInfo& container) {
  if (gpus.gpus <= 0)
    return info("host_config.host_ram", fmt::format("host RAM vs GPU memory not judged: no GPU ({}); expected RAM at least {:.0f}x the total GPU memory",
                                                    gpus.why_none.empty() ? "NVML reports 0 devices" : gpus.why_none, min_ram_to_gpu_memory));
  const auto meminfo = procfs::read_meminfo(meminfo_path);
  if (!meminfo.count("MemTotal")) return info("host_config.host_ram", fmt::format("MemTotal not found in {}: not judged", meminfo_path));
  if (!gpus.total_memory_bytes) return info("host_config.host_ram", "a GPU did not report its memory size (NVML): not judged");
  const std::uint64_t mem_total = meminfo.at("MemTotal");
  const std::optional<std::uint64_t> limit = container.limits.memory_limit_bytes;
  const bool limited = limit && *limit < mem_total;
  const double ram = static_cast<double>(usable_ram_bytes(mem_total, limit)), gpu_memory = static_cast<double>(*gpus.total_memory_bytes);
  const double ratio = ram / gpu_memory;
  const std::string ram_text =
      limited ? fmt::format("the cgroup memory limit {} ({}; the host has {} MemTotal)", format_bytes(ram), container.limits.memory_limit_source,
                            format_bytes(static_cast<double>(mem_total)))
              : fmt::format("host RAM {} (MemTotal, {})", format_bytes(ram), meminfo_path);
  const std::string read = fmt::format("{} is {:.2f}x the {} GPU(s)' {} of memory (NVML)", ram_text, ratio, gpus.gpus, format_bytes(gpu_memory));
  if (ratio < min_ram_to_gpu_memory)
    return warn("host_config.host_ram", fmt::format("{}; expected at least {:.0f}x (plan 2-4x): page cache for the dataset, pinned staging "
                                                    "buffers and CPU-offloaded optimizer state compete for the rest", read, min_ram_to_gpu_memory));
  return info("host_config.host_ram", fmt::format("{}; expected at least {:.0f}x", read, min_ram_to_gpu_memory));
}

Finding check_cores_per_gpu(const std::string& cpu_dir, int allowed_cpus, const GpuInventory& gpus, const ContainerInfo& container) {
  const std::vector<int> online = parse_cpu_list(procfs::read_first_line(cpu_dir + "/online").value_or(""));
  std::set<std::pair<std::string, std::string>> cores;  // (package, core) pairs
  bool topology = !online.empty();
  for (int cpu : online) {
    const std::string base = fmt::format("{}/cpu{}/topology/", cpu_dir, cpu);
    const auto package = procfs::read_first_line(base + "physical_package_id"), core = procfs::read_first_line(base + "core_id");
    if (!package || !core) topology = false;
    else cores.insert({*package, *core});
  }
  const int logical = online.empty() ? allowed_cpus : static_cast<int>(online.size());
  const int physical = topology ? static_cast<int>(cores.size()) : logical;
  const std::string counted = topology ? fmt::format("{} physical cores, {} logical CPUs online (read {}/online and cpuN/topology)", physical, logical, cpu_dir)
                                       : fmt::format("{} logical CPUs ({}/cpuN/topology not readable, so logical CPUs are counted)", logical, cpu_dir);
  const int by_affinity = std::min(physical, allowed_cpus);
  const int usable = usable_cores(physical, allowed_cpus, container.limits.cpu_limit);
  std::string limit = allowed_cpus < logical ? fmt::format("; this process may use only {} of them (sched_getaffinity), judged on those", allowed_cpus) : "";
  if (usable < by_affinity)
    limit = fmt::format("; the cgroup CPU quota is {:.2f} CPUs ({}), so a job here keeps {} busy, judged on those", *container.limits.cpu_limit,
                        container.limits.cpu_limit_source, usable);
  if (gpus.gpus <= 0)
    return info("host_config.cores_per_gpu", fmt::format("{}{}; cores per GPU not judged: no GPU ({})", counted, limit,
                                                         gpus.why_none.empty() ? "NVML reports 0 devices" : gpus.why_none));
  const double per_gpu = static_cast<double>(usable) / gpus.gpus;
  const std::string read = fmt::format("{}{}, {} GPU(s): {:.1f} cores per GPU", counted, limit, gpus.gpus, per_gpu);
  if (per_gpu < min_cores_per_gpu)
    return warn("host_config.cores_per_gpu", fmt::format("{}; expected at least {:.0f} (plan 4-8): loading, decoding and augmentation "
                                                         "per GPU need those cores, or the GPUs wait on the CPU", read, min_cores_per_gpu));
  return info("host_config.cores_per_gpu", fmt::format("{}; expected at least {:.0f}", read, min_cores_per_gpu));
}

std::vector<Finding> check_node_config(const ConfigPaths& paths, const GpuInventory& gpus, int allowed_cpus,
                                       const ContainerInfo& container) {
  std::vector<Finding> findings{check_cpu_governor(paths.cpu_dir, container),
          check_transparent_hugepages(paths.thp_dir),
          check_swap(paths.swaps),
          check_shm(paths.shm),
          check_memlock(paths.meminfo),
          check_numa_balancing(paths.numa_balancing),
          check_iommu(paths.cmdline, paths.iommu_class, paths.iommu_groups, container),
          check_host_ram_vs_gpu_memory(paths.meminfo, gpus, container),
          check_cores_per_gpu(paths.cpu_dir, allowed_cpus, gpus, container)};
  for (Finding& f : judge_kernel_log(read_kernel_log(paths.kernel_log))) findings.push_back(std::move(f));
  return findings;
}

}  // namespace nodeaudit::host
