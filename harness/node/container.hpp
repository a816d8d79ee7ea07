// Whether nodeaudit runs inside a container, and the CPU and memory the container's cgroup grants.
// A training job started in the same container gets those limits, not the host's totals, so the
// cores-per-GPU and RAM rules judge the limits. Every reader takes its paths, so tests feed
// recorded copies (tests/fixtures/container/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeaudit {

struct ContainerPaths {
  std::string dockerenv = "/.dockerenv";            // written by Docker (and kept by some other engines)
  std::string containerenv = "/run/.containerenv";  // written by Podman and CRI-O
  std::string self_cgroup = "/proc/self/cgroup";
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string mountinfo = "/proc/self/mountinfo";
  // The `container=` and KUBERNETES_SERVICE_HOST variables of this process; off in tests.
  bool read_environment = true;
};

struct CgroupLimits {
  std::string version;                           // "v2", "v1" or "" when no cgroup file system is mounted
  std::optional<double> cpu_limit;               // CPUs' worth of quota (cpu.max 200000 100000 -> 2.0); empty = none
  std::string cpu_limit_source;                  // the file the tightest quota came from
  std::optional<std::uint64_t> memory_limit_bytes;  // empty = none
  std::string memory_limit_source;
};

struct ContainerInfo {
  bool detected = false;
  std::string runtime;                // docker, podman, kubernetes, containerd, cri-o, lxc, or "unknown"
  std::vector<std::string> evidence;  // what was found, one sentence each
  CgroupLimits limits;
};

// cgroup v2 `cpu.max` ("max 100000" -> none, "150000 100000" -> 1.5); empty on malformed text too.
std::optional<double> parse_cpu_max(const std::string& text);
// cgroup v2 `memory.max` ("max" -> none) and v1 `memory.limit_in_bytes` (a page-rounded 2^63 -> none).
std::optional<std::uint64_t> parse_memory_limit(const std::string& text);
// cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` (-1 quota -> none).
std::optional<double> parse_cfs_quota(const std::string& quota_text, const std::string& period_text);

// The limits of this process's cgroup and of every ancestor visible under cgroup_root: the tightest wins,
// since a parent's limit binds its children too.
CgroupLimits read_cgroup_limits(const ContainerPaths& paths);
ContainerInfo detect_container(const ContainerPaths& paths = {});

// What a job in this cgroup can use: the least of the host's count, the CPU affinity and the quota
// (a 2.5-CPU quota keeps 2 cores busy, so it rounds down, never below 1).
int usable_cores(int host_cores, int allowed_cpus, std::optional<double> cpu_limit);
std::uint64_t usable_ram_bytes(std::uint64_t host_ram_bytes, std::optional<std::uint64_t> memory_limit_bytes);

// True when `path` lies on the container's own writable layer: its mount is the root mount and that
// is an overlay (kernel overlayfs, rootless fuse-overlayfs, aufs), so a measurement there measures the overlay driver, not the storage under test.
bool on_container_layer(const std::string& path, const std::string& mountinfo = "/proc/self/mountinfo");

// env.container (results/SCHEMA.md); host figures are those env.host records.
nlohmann::json container_json(const ContainerInfo& info, int host_cores, int allowed_cpus, std::uint64_t host_ram_bytes);

}  // namespace nodeaudit
