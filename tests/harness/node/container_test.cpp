// Container detection and cgroup CPU/memory limits, on recorded cgroup trees (tests/fixtures/container).
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/node/container.hpp"
#include "tests/support/fixtures.hpp"

namespace nodeaudit {
namespace {

ContainerPaths fixture(const std::string& name) {
  const std::string dir = test_files::fixture("container/" + name + "/");
  ContainerPaths p;
  p.dockerenv = dir + "dockerenv";
  p.containerenv = dir + "run/.containerenv";
  p.self_cgroup = dir + "proc/self_cgroup";
  p.cgroup_root = dir + "cgroup";
  p.read_environment = false;
  return p;
}

TEST(CgroupParse, CpuMaxIsQuotaOverPeriodAndMaxIsNone) {
  EXPECT_DOUBLE_EQ(parse_cpu_max("150000 100000").value(), 1.5);
  EXPECT_DOUBLE_EQ(parse_cpu_max("400000 100000").value(), 4.0);
  EXPECT_FALSE(parse_cpu_max("max 100000"));
  EXPECT_FALSE(parse_cpu_max("100000 0"));
  EXPECT_FALSE(parse_cpu_max("garbage"));
  EXPECT_FALSE(parse_cpu_max(""));
}

TEST(CgroupParse, MemoryLimitMaxAndV1UnlimitedAreNone) {
  EXPECT_EQ(parse_memory_limit("4294967296").value(), 4294967296ull);
  EXPECT_FALSE(parse_memory_limit("max"));
  EXPECT_FALSE(parse_memory_limit("9223372036854771712"));  // v1's "no limit"
  EXPECT_FALSE(parse_memory_limit("-1"));
}

TEST(CgroupParse, CfsQuotaMinusOneIsNone) {
  EXPECT_DOUBLE_EQ(parse_cfs_quota("50000", "100000").value(), 0.5);
  EXPECT_FALSE(parse_cfs_quota("-1", "100000"));
  EXPECT_FALSE(parse_cfs_quota("50000", "0"));
}

TEST(ContainerDetect, DockerenvAndV2LimitsOfItsOwnNamespace) {
  const ContainerInfo c = detect_container(fixture("docker-v2-limited"));
  EXPECT_TRUE(c.detected);
  EXPECT_EQ(c.runtime, "docker");
  ASSERT_EQ(c.evidence.size(), 1u);
  EXPECT_NE(c.evidence[0].find("dockerenv exists"), std::string::npos);
  EXPECT_EQ(c.limits.version, "v2");
  EXPECT_DOUBLE_EQ(c.limits.cpu_limit.value(), 2.5);
  EXPECT_NE(c.limits.cpu_limit_source.find("cgroup/cpu.max"), std::string::npos);
  EXPECT_EQ(c.limits.memory_limit_bytes.value(), 4ull << 30);
}

TEST(ContainerDetect, KubepodsPathAndTheTightestLimitOfItsAncestors) {
  const ContainerInfo c = detect_container(fixture("kubepods-v2-nested"));
  EXPECT_TRUE(c.detected);
  EXPECT_EQ(c.runtime, "kubernetes");
  EXPECT_DOUBLE_EQ(c.limits.cpu_limit.value(), 2.0);  // the container's own cpu.max
  EXPECT_NE(c.limits.cpu_limit_source.find("cri-containerd-0f3a.scope/cpu.max"), std::string::npos);
  EXPECT_EQ(c.limits.memory_limit_bytes.value(), 8ull << 30);  // the pod slice's, the container's own is max
  EXPECT_NE(c.limits.memory_limit_source.find("kubepods.slice/memory.max"), std::string::npos);
}

TEST(ContainerDetect, PodmanOnHybridCgroupsReadsV1Controllers) {
  const ContainerInfo c = detect_container(fixture("podman-v1-hybrid"));
  EXPECT_TRUE(c.detected);
  EXPECT_EQ(c.runtime, "podman");
  EXPECT_EQ(c.evidence.size(), 2u);  // /run/.containerenv and the libpod cgroup path
  EXPECT_EQ(c.limits.version, "v1");
  EXPECT_DOUBLE_EQ(c.limits.cpu_limit.value(), 1.5);
  EXPECT_EQ(c.limits.memory_limit_bytes.value(), 2ull << 30);
  EXPECT_NE(c.limits.memory_limit_source.find("libpod-7c1e/memory.limit_in_bytes"), std::string::npos);
}

TEST(ContainerDetect, PlainHostWithoutLimits) {
  const ContainerInfo c = detect_container(fixture("host-v2-unlimited"));
  EXPECT_FALSE(c.detected);
  EXPECT_EQ(c.runtime, "");
  EXPECT_TRUE(c.evidence.empty());
  EXPECT_EQ(c.limits.version, "v2");
  EXPECT_FALSE(c.limits.cpu_limit);
  EXPECT_FALSE(c.limits.memory_limit_bytes);
}

TEST(ContainerDetect, NoCgroupFileSystemMeansNoLimits) {
  ContainerPaths p = fixture("absent");
  const ContainerInfo c = detect_container(p);
  EXPECT_FALSE(c.detected);
  EXPECT_EQ(c.limits.version, "");
}

TEST(ContainerLimits, UsableCoresIsTheLeastOfHostAffinityAndQuota) {
  EXPECT_EQ(usable_cores(64, 64, std::nullopt), 64);
  EXPECT_EQ(usable_cores(64, 16, std::nullopt), 16);
  EXPECT_EQ(usable_cores(64, 64, 2.5), 2);  // 2.5 CPUs of quota keep 2 cores busy
  EXPECT_EQ(usable_cores(64, 8, 12.0), 8);
  EXPECT_EQ(usable_cores(64, 64, 0.5), 1);
  EXPECT_EQ(usable_ram_bytes(512ull << 30, 64ull << 30), 64ull << 30);
  EXPECT_EQ(usable_ram_bytes(16ull << 30, 64ull << 30), 16ull << 30);
  EXPECT_EQ(usable_ram_bytes(16ull << 30, std::nullopt), 16ull << 30);
}

TEST(ContainerLimits, EnvJsonCarriesLimitsAndUsableFigures) {
  const nlohmann::json j = container_json(detect_container(fixture("docker-v2-limited")), 32, 32, 256ull << 30);
  EXPECT_EQ(j["detected"], true);
  EXPECT_EQ(j["runtime"], "docker");
  EXPECT_EQ(j["cgroup"], "v2");
  EXPECT_DOUBLE_EQ(j["cpu_limit"].get<double>(), 2.5);
  EXPECT_EQ(j["memory_limit_bytes"].get<std::uint64_t>(), 4ull << 30);
  EXPECT_EQ(j["usable_cores"], 2);
  EXPECT_EQ(j["usable_ram_bytes"].get<std::uint64_t>(), 4ull << 30);
  const nlohmann::json host = container_json(detect_container(fixture("host-v2-unlimited")), 32, 32, 256ull << 30);
  EXPECT_TRUE(host["cpu_limit"].is_null());
  EXPECT_TRUE(host["memory_limit_bytes"].is_null());
  EXPECT_EQ(host["usable_cores"], 32);
}

// The overlay check needs a real path's device numbers; the mountinfo around it is written here.
TEST(ContainerLayer, RootOverlayIsTheWritableLayerAndABindMountIsNot) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("nodeaudit-layer-{}", getpid());
  std::filesystem::create_directories(dir);
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  const std::string dev = fmt::format("{}:{}", major(st.st_dev), minor(st.st_dev));
  auto mountinfo_with = [&](const std::string& line) {
    const std::string path = (dir / "mountinfo").string();
    std::ofstream(path) << "20 1 0:99 / /proc rw - proc proc rw\n" << line << "\n";
    return path;
  };
  EXPECT_TRUE(on_container_layer(dir.string(), mountinfo_with("30 1 " + dev + " / / rw - overlay overlay rw,lowerdir=/l,upperdir=/u")));
  EXPECT_FALSE(on_container_layer(dir.string(), mountinfo_with("31 30 " + dev + " /srv/audit /data rw - ext4 /dev/nvme0n1p1 rw")));
  EXPECT_FALSE(on_container_layer(dir.string(), mountinfo_with("30 1 " + dev + " / / rw - ext4 /dev/vda rw")));
  EXPECT_FALSE(on_container_layer((dir / "missing").string(), mountinfo_with("30 1 " + dev + " / / rw - overlay overlay rw")));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nodeaudit
