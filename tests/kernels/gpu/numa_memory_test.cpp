// Host buffers for gpu.pcie land on the NUMA node they ask for; PCI addresses map to sysfs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "numa_memory.hpp"

namespace nodeaudit::gpu {
namespace {

namespace fs = std::filesystem;

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

TEST(NumaMemory, BufferLandsOnTheRequestedNodeAndIsTouched) {
  std::string error;
  NodeMemory memory = NodeMemory::allocate(16ull << 20, 0, error);
  if (error.find("Operation not permitted") != std::string::npos || error.find("not implemented") != std::string::npos)
    GTEST_SKIP() << "mbind refused here: " << error;
  ASSERT_EQ(error, "");
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
