// host.config inside a container: RAM and cores per GPU judged on the cgroup limits, the host's
// governor and IOMMU not judged when the container hides them (tests/fixtures/host, fixtures/container).
#include <gtest/gtest.h>

#include "hostconfig/config_rules.hpp"

namespace nodeaudit::host {
namespace {

const std::string fixtures = std::string(NODEAUDIT_FIXTURES) + "/";
const std::string tuned = fixtures + "host/gpu-node-tuned/";
const std::string recorded = fixtures + "host/recorded-kvm-2cpu/";
constexpr std::uint64_t gib = 1ull << 30;

bool mentions(const Finding& f, const std::string& text) { return f.message.find(text) != std::string::npos; }

// A container as detect_container() reports it, with the given cgroup limits.
ContainerInfo container_with(std::optional<double> cpus, std::optional<std::uint64_t> memory_bytes) {
  ContainerInfo c;
  c.detected = true;
  c.runtime = "docker";
  c.evidence = {"/.dockerenv exists"};
  c.limits.version = "v2";
  c.limits.cpu_limit = cpus;
  c.limits.cpu_limit_source = "/sys/fs/cgroup/cpu.max";
  c.limits.memory_limit_bytes = memory_bytes;
  c.limits.memory_limit_source = "/sys/fs/cgroup/memory.max";
  return c;
}

TEST(ConfigContainer, RamIsJudgedOnTheMemoryLimit) {
  // The tuned node has 2 TiB; a 256 GiB limit against 2 x 80 GiB GPUs is 1.6x: below the 2x rule.
  const Finding limited = check_host_ram_vs_gpu_memory(tuned + "proc/meminfo", {2, 160 * gib, ""}, container_with(std::nullopt, 256 * gib));
  EXPECT_EQ(limited.severity, Severity::warn) << limited.message;
  EXPECT_TRUE(mentions(limited, "cgroup memory limit 256 GiB")) << limited.message;
  EXPECT_TRUE(mentions(limited, "/sys/fs/cgroup/memory.max")) << limited.message;
  EXPECT_TRUE(mentions(limited, "1.60x")) << limited.message;
  // A limit above MemTotal binds nothing: the host's RAM is judged, as without a container.
  const Finding loose = check_host_ram_vs_gpu_memory(tuned + "proc/meminfo", {2, 160 * gib, ""}, container_with(std::nullopt, 8192 * gib));
  EXPECT_EQ(loose.severity, Severity::info) << loose.message;
  EXPECT_TRUE(mentions(loose, "(MemTotal,")) << loose.message;
}

TEST(ConfigContainer, CoresPerGpuAreJudgedOnTheCpuQuota) {
  // 8 physical cores and 2 GPUs pass (4 per GPU); a 3.5-CPU quota keeps 3 busy: 1.5 per GPU.
  const Finding quota = check_cores_per_gpu(tuned + "cpu", 16, {2, 160 * gib, ""}, container_with(3.5, std::nullopt));
  EXPECT_EQ(quota.severity, Severity::warn) << quota.message;
  EXPECT_TRUE(mentions(quota, "cgroup CPU quota is 3.50 CPUs (/sys/fs/cgroup/cpu.max)")) << quota.message;
  EXPECT_TRUE(mentions(quota, "1.5 cores per GPU")) << quota.message;
  const Finding generous = check_cores_per_gpu(tuned + "cpu", 16, {2, 160 * gib, ""}, container_with(64.0, std::nullopt));
  EXPECT_EQ(generous.severity, Severity::info) << generous.message;
  EXPECT_FALSE(mentions(generous, "quota")) << generous.message;
}

TEST(ConfigContainer, HiddenGovernorAndIommuAreNotJudgedInAContainer) {
  const ContainerInfo in_container = container_with(std::nullopt, std::nullopt);
  const Finding governor = check_cpu_governor(recorded + "cpu", in_container);
  EXPECT_EQ(governor.severity, Severity::info);
  EXPECT_TRUE(mentions(governor, "not judged (in a container:")) << governor.message;
  const Finding iommu = check_iommu(tuned + "proc/cmdline", recorded + "iommu", recorded + "iommu_groups", in_container);
  EXPECT_EQ(iommu.severity, Severity::info);
  EXPECT_TRUE(mentions(iommu, "not judged (in a container:")) << iommu.message;
  // What the container does show is the host's, and is judged as on the host.
  const Finding visible = check_cpu_governor(tuned + "cpu", in_container);
  EXPECT_TRUE(mentions(visible, "'performance' governor")) << visible.message;
}

TEST(ConfigContainer, PlainHostKeepsItsMessages) {
  const Finding governor = check_cpu_governor(recorded + "cpu");
  EXPECT_FALSE(mentions(governor, "in a container")) << governor.message;
  const Finding iommu = check_iommu(tuned + "proc/cmdline", recorded + "iommu", recorded + "iommu_groups");
  EXPECT_TRUE(mentions(iommu, "not active")) << iommu.message;
}

// The limits as read from the recorded cgroup trees flow into the rules unchanged.
TEST(ConfigContainer, DetectedLimitsFromCgroupFiles) {
  ContainerPaths paths;
  const std::string dir = fixtures + "container/docker-v2-limited/";
  paths.dockerenv = dir + "dockerenv", paths.containerenv = dir + "run/.containerenv";
  paths.self_cgroup = dir + "proc/self_cgroup", paths.cgroup_root = dir + "cgroup", paths.read_environment = false;
  const ContainerInfo c = detect_container(paths);
  const Finding cores = check_cores_per_gpu(tuned + "cpu", 16, {1, 80 * gib, ""}, c);
  EXPECT_TRUE(mentions(cores, "2.0 cores per GPU")) << cores.message;  // 2.5 CPUs of quota -> 2 cores
  const Finding ram = check_host_ram_vs_gpu_memory(tuned + "proc/meminfo", {1, 80 * gib, ""}, c);
  EXPECT_TRUE(mentions(ram, "cgroup memory limit 4 GiB")) << ram.message;
  EXPECT_EQ(ram.severity, Severity::warn);
}

}  // namespace
}  // namespace nodeaudit::host
