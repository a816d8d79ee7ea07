// host.config rules. Each rule takes its readings (file paths, defaulting to the real /proc and /sys,
// or a number already read) and returns one finding that names what was read and what is expected.
// Tests feed recorded copies of those files (tests/fixtures/host/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/metric.hpp"
#include "harness/node/container.hpp"

namespace nodeaudit::host {

struct ConfigPaths {
  std::string cpu_dir = "/sys/devices/system/cpu";
  std::string thp_dir = "/sys/kernel/mm/transparent_hugepage";
  std::string swaps = "/proc/swaps";
  std::string meminfo = "/proc/meminfo";
  std::string shm = "/dev/shm";
  std::string numa_balancing = "/proc/sys/kernel/numa_balancing";
  std::string cmdline = "/proc/cmdline";
  std::string iommu_class = "/sys/class/iommu";
  std::string iommu_groups = "/sys/kernel/iommu_groups";
  std::string kernel_log = "/dev/kmsg";  // read for NVIDIA Xid events (xid_events.hpp)
};

// What NVML says about the node's GPUs (gpus = 0 with `why_none` when there are none).
struct GpuInventory {
  int gpus = 0;
  std::optional<std::uint64_t> total_memory_bytes;  // empty when a device did not report it
  std::string why_none;
};

// A rule's finding, at either severity.
Finding info(std::string code, std::string message);
Finding warn(std::string code, std::string message);

// "0-3,8,10-11" -> 0 1 2 3 8 10 11; empty on a malformed list.
std::vector<int> parse_cpu_list(const std::string& text);
// The bracketed choice of a sysfs selector ("always [madvise] never" -> "madvise").
std::optional<std::string> selected_choice(const std::string& text);

// A rule whose host setting a container cannot see says `not judged (in a container: ...)` when the
// reading is missing and `container` says it runs in one, instead of guessing from the empty reading.
Finding check_cpu_governor(const std::string& cpu_dir, const ContainerInfo& container = {});
Finding check_transparent_hugepages(const std::string& thp_dir);
Finding check_swap(const std::string& swaps_path);
// /dev/shm size from statvfs; judge_shm_size takes the size (or the error) so tests can feed numbers.
Finding check_shm(const std::string& shm_path);
Finding judge_shm_size(const std::string& shm_path, std::optional<std::uint64_t> size_bytes, const std::string& error);
// ulimit -l from getrlimit(RLIMIT_MEMLOCK); judge_memlock takes the soft limit (empty = unlimited).
Finding check_memlock(const std::string& meminfo_path);
Finding judge_memlock(std::optional<std::uint64_t> soft_limit_bytes, std::optional<std::uint64_t> ram_bytes);
Finding check_numa_balancing(const std::string& path);
Finding check_iommu(const std::string& cmdline_path, const std::string& iommu_class_dir, const std::string& iommu_groups_dir,
                    const ContainerInfo& container = {});
// Judged on the cgroup memory limit when there is one below MemTotal: that is what a job here gets.
Finding check_host_ram_vs_gpu_memory(const std::string& meminfo_path, const GpuInventory& gpus, const ContainerInfo& container = {});
// Physical cores from cpu_dir (online list + topology); `allowed_cpus` is this process's affinity;
// a cgroup CPU quota below both is judged instead.
Finding check_cores_per_gpu(const std::string& cpu_dir, int allowed_cpus, const GpuInventory& gpus, const ContainerInfo& container = {});

std::vector<Finding> check_node_config(const ConfigPaths& paths, const GpuInventory& gpus, int allowed_cpus,
                                       const ContainerInfo& container = {});

}  // namespace nodeaudit::host
