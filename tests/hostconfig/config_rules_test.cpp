// Each host.config rule on recorded and written /proc and /sys readings (tests/fixtures/host).
#include <gtest/gtest.h>

#include <set>

#include "hostconfig/config_rules.hpp"

namespace nodeaudit::host {
namespace {

const std::string fixtures = std::string(NODEAUDIT_FIXTURES) + "/host/";
const std::string recorded = fixtures + "recorded-kvm-2cpu/";
const std::string tuned = fixtures + "gpu-node-tuned/";
const std::string untuned = fixtures + "gpu-node-untuned/";

constexpr std::uint64_t gib = 1ull << 30;
const GpuInventory eight_80gib_gpus{8, 8 * 80 * gib, ""};
const GpuInventory no_gpu{0, std::nullopt, "libnvidia-ml.so.1 not found"};

bool mentions(const Finding& f, const std::string& text) { return f.message.find(text) != std::string::npos; }

TEST(ConfigRules, CpuListParsing) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("0"), (std::vector<int>{0}));
  EXPECT_TRUE(parse_cpu_list("3-1").empty());
  EXPECT_TRUE(parse_cpu_list("x").empty());
  EXPECT_EQ(selected_choice("always [madvise] never"), "madvise");
  EXPECT_FALSE(selected_choice("madvise").has_value());
}

TEST(ConfigRules, Governor) {
  const Finding good = check_cpu_governor(tuned + "cpu");
  EXPECT_EQ(good.severity, Severity::info);
  EXPECT_TRUE(mentions(good, "all 16 CPUs")) << good.message;
  const Finding bad = check_cpu_governor(untuned + "cpu");
  EXPECT_EQ(bad.severity, Severity::warn);
  EXPECT_TRUE(mentions(bad, "12 of 16 CPUs")) << bad.message;
  EXPECT_TRUE(mentions(bad, "12 'powersave'")) << bad.message;
  EXPECT_TRUE(mentions(bad, "scaling_governor")) << bad.message;
  const Finding vm = check_cpu_governor(recorded + "cpu");
  EXPECT_EQ(vm.severity, Severity::info);
  EXPECT_TRUE(mentions(vm, "not judged")) << vm.message;
}

TEST(ConfigRules, TransparentHugePages) {
  const Finding vm = check_transparent_hugepages(recorded + "thp");
  EXPECT_EQ(vm.severity, Severity::info);
  EXPECT_TRUE(mentions(vm, "enabled 'madvise', defrag 'madvise'")) << vm.message;
  const Finding off = check_transparent_hugepages(untuned + "thp");
  EXPECT_EQ(off.severity, Severity::warn);
  EXPECT_TRUE(mentions(off, "'never'")) << off.message;
  const Finding stalls = check_transparent_hugepages(fixtures + "thp-defrag-always");
  EXPECT_EQ(stalls.severity, Severity::warn);
  EXPECT_TRUE(mentions(stalls, "compaction")) << stalls.message;
  EXPECT_EQ(check_transparent_hugepages(fixtures + "absent").severity, Severity::info);
}

TEST(ConfigRules, Swap) {
  const Finding none = check_swap(recorded + "proc/swaps");
  EXPECT_EQ(none.severity, Severity::info);
  EXPECT_TRUE(mentions(none, "no active swap")) << none.message;
  const Finding on = check_swap(untuned + "proc/swaps");
  EXPECT_EQ(on.severity, Severity::warn);
  EXPECT_TRUE(mentions(on, "1 device(s)")) << on.message;
  EXPECT_TRUE(mentions(on, "/swap.img")) << on.message;
  EXPECT_TRUE(mentions(on, "8 GiB") || mentions(on, "8.0 GiB")) << on.message;
}

TEST(ConfigRules, SharedMemorySize) {
  const Finding container_default = judge_shm_size("/dev/shm", 64ull << 20, "");
  EXPECT_EQ(container_default.severity, Severity::fail);
  EXPECT_TRUE(mentions(container_default, "64 MiB")) << container_default.message;
  EXPECT_EQ(judge_shm_size("/dev/shm", 512ull << 20, "").severity, Severity::warn);
  EXPECT_EQ(judge_shm_size("/dev/shm", 16 * gib, "").severity, Severity::info);
  const Finding missing = check_shm(fixtures + "no-such-dir");
  EXPECT_EQ(missing.severity, Severity::warn);
  EXPECT_TRUE(mentions(missing, "statvfs")) << missing.message;
  EXPECT_TRUE(mentions(missing, "No such file")) << missing.message;
}

TEST(ConfigRules, LockedMemoryLimit) {
  const Finding low = judge_memlock(8ull << 20, 64 * gib);
  EXPECT_EQ(low.severity, Severity::warn);
  EXPECT_TRUE(mentions(low, "8 MiB")) << low.message;
  EXPECT_TRUE(mentions(low, "RLIMIT_MEMLOCK")) << low.message;
  EXPECT_EQ(judge_memlock(std::nullopt, 64 * gib).severity, Severity::info);
  EXPECT_EQ(judge_memlock(128 * gib, 64 * gib).severity, Severity::info);
}

TEST(ConfigRules, NumaBalancing) {
  EXPECT_EQ(check_numa_balancing(recorded + "proc/numa_balancing").severity, Severity::info);
  const Finding on = check_numa_balancing(untuned + "proc/numa_balancing");
  EXPECT_EQ(on.severity, Severity::warn);
  EXPECT_TRUE(mentions(on, "= 1")) << on.message;
  EXPECT_TRUE(mentions(check_numa_balancing(fixtures + "absent"), "not judged"));
}

TEST(ConfigRules, IommuMode) {
  const Finding pt = check_iommu(tuned + "proc/cmdline", tuned + "iommu", tuned + "iommu_groups");
  EXPECT_EQ(pt.severity, Severity::info);
  EXPECT_TRUE(mentions(pt, "passthrough")) << pt.message;
  EXPECT_TRUE(mentions(pt, "3 identity")) << pt.message;
  const Finding translated = check_iommu(untuned + "proc/cmdline", untuned + "iommu", untuned + "iommu_groups");
  EXPECT_EQ(translated.severity, Severity::warn);
  EXPECT_TRUE(mentions(translated, "3 DMA-FQ")) << translated.message;
  EXPECT_TRUE(mentions(translated, "'intel_iommu=on'")) << translated.message;
  const Finding by_cmdline = check_iommu(tuned + "proc/cmdline", tuned + "iommu", fixtures + "absent");
  EXPECT_EQ(by_cmdline.severity, Severity::info) << by_cmdline.message;
  const Finding inactive = check_iommu(untuned + "proc/cmdline", recorded + "iommu", recorded + "iommu_groups");
  EXPECT_EQ(inactive.severity, Severity::info);
  EXPECT_TRUE(mentions(inactive, "not active")) << inactive.message;
}

TEST(ConfigRules, HostRamAgainstGpuMemory) {
  const Finding low = check_host_ram_vs_gpu_memory(untuned + "proc/meminfo", eight_80gib_gpus);
  EXPECT_EQ(low.severity, Severity::warn);
  EXPECT_TRUE(mentions(low, "0.39x")) << low.message;
  EXPECT_TRUE(mentions(low, "640 GiB")) << low.message;
  const Finding ample = check_host_ram_vs_gpu_memory(tuned + "proc/meminfo", eight_80gib_gpus);
  EXPECT_EQ(ample.severity, Severity::info);
  EXPECT_TRUE(mentions(ample, "3.15x")) << ample.message;
  const Finding none = check_host_ram_vs_gpu_memory(recorded + "proc/meminfo", no_gpu);
  EXPECT_EQ(none.severity, Severity::info);
  EXPECT_TRUE(mentions(none, "not judged: no GPU (libnvidia-ml.so.1 not found)")) << none.message;
}

TEST(ConfigRules, CoresPerGpu) {
  const Finding enough = check_cores_per_gpu(tuned + "cpu", 16, {2, 160 * gib, ""});
  EXPECT_EQ(enough.severity, Severity::info);
  EXPECT_TRUE(mentions(enough, "8 physical cores, 16 logical CPUs")) << enough.message;
  EXPECT_TRUE(mentions(enough, "4.0 cores per GPU")) << enough.message;
  const Finding few = check_cores_per_gpu(tuned + "cpu", 16, {4, 320 * gib, ""});
  EXPECT_EQ(few.severity, Severity::warn);
  EXPECT_TRUE(mentions(few, "2.0 cores per GPU")) << few.message;
  const Finding boxed = check_cores_per_gpu(tuned + "cpu", 4, {2, 160 * gib, ""});
  EXPECT_EQ(boxed.severity, Severity::warn);
  EXPECT_TRUE(mentions(boxed, "may use only 4")) << boxed.message;
  const Finding none = check_cores_per_gpu(recorded + "cpu", 2, no_gpu);
  EXPECT_EQ(none.severity, Severity::info);
  EXPECT_TRUE(mentions(none, "2 physical cores")) << none.message;
}

TEST(ConfigRules, NodeCheckRunsEveryRuleOnce) {
  ConfigPaths paths;
  paths.cpu_dir = untuned + "cpu", paths.thp_dir = untuned + "thp", paths.swaps = untuned + "proc/swaps";
  paths.meminfo = untuned + "proc/meminfo", paths.numa_balancing = untuned + "proc/numa_balancing";
  paths.cmdline = untuned + "proc/cmdline", paths.iommu_class = untuned + "iommu", paths.iommu_groups = untuned + "iommu_groups";
  paths.shm = fixtures;  // a directory that exists; its size depends on the disk, so only the code is checked
  paths.kernel_log = fixtures + "kernel-log/kmsg-no-xid.txt";
  const std::vector<Finding> findings = check_node_config(paths, eight_80gib_gpus, 16);
  std::set<std::string> codes;
  for (const Finding& f : findings) codes.insert(f.code);
  EXPECT_EQ(findings.size(), 10u);
  EXPECT_EQ(codes.size(), 10u);
  EXPECT_TRUE(codes.count("host_config.kernel_log"));
  int warnings = 0;
  for (const Finding& f : findings) warnings += f.severity == Severity::warn;
  EXPECT_GE(warnings, 7) << "the untuned node breaks governor, THP, swap, NUMA, IOMMU, RAM and cores-per-GPU rules";
}

}  // namespace
}  // namespace nodeaudit::host
