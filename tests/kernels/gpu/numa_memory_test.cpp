// Host buffers for gpu.pcie land on the NUMA node they ask for; PCI addresses map to sysfs.
#include <gtest/gtest.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "kernels/gpu/numa_memory.hpp"

namespace nodeaudit::gpu {
namespace {

namespace fs = std::filesystem;

// Whether the kernel itself refuses mbind here (ENOSYS: no NUMA support; EPERM: a seccomp filter),
// asked with the raw system call on a page of our own rather than through the code under test.
std::string mbind_refusal_here() {
  const long page = sysconf(_SC_PAGESIZE);
  void* data = mmap(nullptr, static_cast<std::size_t>(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) return "";
  unsigned long node0 = 1;
  constexpr int mpol_preferred = 1;
  const long rc = syscall(SYS_mbind, data, page, mpol_preferred, &node0, 8 * sizeof(node0) + 1, 0);
  const int error = errno;
  munmap(data, static_cast<std::size_t>(page));
  if (rc == 0 || (error != ENOSYS && error != EPERM)) return "";
  return std::string("mbind refused by the kernel here: ") + std::strerror(error);
}

TEST(NumaMemory, PciAddressesFromCudaAndNvmlMapToTheSysfsSpelling) {
  EXPECT_EQ(sysfs_pci_address("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(sysfs_pci_address("00000000:C1:1F.7"), "0000:c1:1f.7");
  EXPECT_FALSE(sysfs_pci_address("GPU-1234").has_value());
  EXPECT_FALSE(sysfs_pci_address("0000:3b:00.0/extra").has_value());
  EXPECT_FALSE(sysfs_pci_address("0000:3b:20.0").has_value());  // device numbers stop at 0x1f
}

// A recorded sysfs tree (written here, not the machine's): one device on node 1, one where the
// platform gives no node (-1), one missing.
TEST(NumaMemory, NodeOfAPciDeviceFromARecordedSysfsTree) {
  const fs::path root = fs::temp_directory_path() / ("nodeaudit-numa-" + std::to_string(getpid()));
  fs::create_directories(root / "0000:3b:00.0");
  fs::create_directories(root / "0000:5e:00.0");
  std::ofstream(root / "0000:3b:00.0" / "numa_node") << "1\n";
  std::ofstream(root / "0000:5e:00.0" / "numa_node") << "-1\n";
  EXPECT_EQ(pci_device_numa_node(root.string(), "00000000:3B:00.0"), 1);
  EXPECT_FALSE(pci_device_numa_node(root.string(), "0000:5E:00.0").has_value());
  EXPECT_FALSE(pci_device_numa_node(root.string(), "0000:86:00.0").has_value());
  fs::remove_all(root);
}

// A recorded GH200-like node tree: node 0 is the Grace CPU, node 1 the GPU's HBM (memory only, an
// empty cpulist), node 2 has no cpulist at all (unreadable).
class HostNodeChoiceTest : public testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "node0");
    fs::create_directories(root_ / "node1");
    std::ofstream(root_ / "node0" / "cpulist") << "0-71\n";
    std::ofstream(root_ / "node1" / "cpulist") << "\n";
  }
  void TearDown() override { fs::remove_all(root_); }
  const fs::path root_ = fs::temp_directory_path() / ("nodeaudit-nodes-" + std::to_string(getpid()));
};

TEST_F(HostNodeChoiceTest, AMemoryOnlyNodeIsRecognised) {
  EXPECT_EQ(numa_node_has_cpus(root_.string(), 0), true);
  EXPECT_EQ(numa_node_has_cpus(root_.string(), 1), false);
  EXPECT_FALSE(numa_node_has_cpus(root_.string(), 2).has_value());
}

TEST_F(HostNodeChoiceTest, HostBuffersGoToTheCpuNodeNeverToTheGpusOwnMemoryNode) {
  // NVML names the HBM node first and the CPU node second: the CPU node is taken.
  const HostNodeChoice affinity = host_node_for_gpu({1, 0}, 1, root_.string());
  EXPECT_EQ(affinity.node, 0);
  EXPECT_EQ(affinity.source, "NVML memory affinity");
  // No affinity from NVML: the PCI device's sysfs node is used when it has CPUs...
  const HostNodeChoice pci = host_node_for_gpu({}, 0, root_.string());
  EXPECT_EQ(pci.node, 0);
  EXPECT_EQ(pci.source, "sysfs PCI device");
  // ...and nothing is placed when every candidate is memory only.
  const HostNodeChoice none = host_node_for_gpu({1}, 1, root_.string());
  EXPECT_FALSE(none.node.has_value());
  EXPECT_NE(none.source.find("with CPUs"), std::string::npos) << none.source;
  // A node whose cpulist cannot be read is not known to be memory only: it is used.
  EXPECT_EQ(host_node_for_gpu({2}, std::nullopt, root_.string()).node, 2);
}

TEST(NumaMemory, BufferLandsOnTheRequestedNodeAndIsTouched) {
  std::string error;
  NodeMemory memory = NodeMemory::allocate(16ull << 20, 0, error);
  ASSERT_EQ(error, "");
  if (!memory.placement_not_applied().empty()) {
    const std::string refusal = mbind_refusal_here();
    if (refusal.empty()) FAIL() << "mbind works here (raw system call), yet: " << memory.placement_not_applied();
    GTEST_SKIP() << refusal;
  }
  ASSERT_NE(memory.data(), nullptr);
  EXPECT_EQ(memory.bytes(), 16ull << 20);
  if (!numa_node_of(memory.data())) GTEST_SKIP() << "get_mempolicy cannot report page placement here";
  EXPECT_EQ(memory.placed_node(), 0);
  EXPECT_EQ(static_cast<unsigned char*>(memory.data())[4096], 0x5a);  // touched before use
}

TEST(NumaMemory, ANodeThatDoesNotExistIsAnErrorNamingIt) {
  std::string error;
  const NodeMemory memory = NodeMemory::allocate(1 << 20, 4000, error);
  EXPECT_NE(error.find("mbind(node 4000)"), std::string::npos) << error;
  EXPECT_EQ(memory.data(), nullptr);
}

TEST(NumaMemory, OnlyRefusalErrnosMeanPlacementNotApplied) {
  EXPECT_TRUE(mbind_refusal_means_unplaced(EPERM));
  EXPECT_TRUE(mbind_refusal_means_unplaced(ENOSYS));
  EXPECT_FALSE(mbind_refusal_means_unplaced(EINVAL));  // a node that does not exist is the caller's error
  EXPECT_FALSE(mbind_refusal_means_unplaced(ENOMEM));
  EXPECT_FALSE(mbind_refusal_means_unplaced(EFAULT));
}

// In a forked child: a seccomp filter makes mbind fail with `errno_value`, as a container's default
// profile does, then a node is requested. Exits 0 when the buffer is usable and says placement was
// not applied; prints what went wrong otherwise.
[[noreturn]] void allocate_with_mbind_refused(int errno_value) {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mbind, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<unsigned>(errno_value) & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    std::fprintf(stderr, "seccomp filter not installed\n");
    std::_Exit(3);
  }
  std::string error;
  NodeMemory memory = NodeMemory::allocate(1 << 20, 0, error);
  if (!error.empty()) std::fprintf(stderr, "allocate failed: %s\n", error.c_str()), std::_Exit(1);
  if (memory.data() == nullptr || static_cast<unsigned char*>(memory.data())[0] != 0x5a) std::_Exit(2);
  if (memory.placement_not_applied().find("mbind(node 0) refused") == std::string::npos) {
    std::fprintf(stderr, "placement_not_applied: '%s'\n", memory.placement_not_applied().c_str());
    std::_Exit(4);
  }
  std::_Exit(0);
}

TEST(NumaMemory, ARefusedMbindStillGivesTouchedMemoryAndSaysPlacementWasNotApplied) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(allocate_with_mbind_refused(EPERM), testing::ExitedWithCode(0), "");
  EXPECT_EXIT(allocate_with_mbind_refused(ENOSYS), testing::ExitedWithCode(0), "");
  EXPECT_EXIT(allocate_with_mbind_refused(EINVAL), testing::ExitedWithCode(1), "allocate failed: mbind\\(node 0\\)");
}

TEST(NumaMemory, WithoutANodeTheBufferIsPlainTouchedMemory) {
  std::string error;
  NodeMemory memory = NodeMemory::allocate(1 << 20, std::nullopt, error);
  ASSERT_EQ(error, "");
  NodeMemory moved = std::move(memory);
  EXPECT_EQ(memory.data(), nullptr);
  ASSERT_NE(moved.data(), nullptr);
  EXPECT_EQ(static_cast<unsigned char*>(moved.data())[0], 0x5a);
}

}  // namespace
}  // namespace nodeaudit::gpu
