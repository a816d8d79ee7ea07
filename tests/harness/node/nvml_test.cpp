// NVML's node masks decode to node numbers; without a driver NVML says why and reads nothing.
#include <gtest/gtest.h>

#include "harness/node/nvml.hpp"

namespace nodeaudit {
namespace {

constexpr unsigned bits_per_word = 8 * sizeof(unsigned long);

TEST(NvmlNodeMask, NodesComeOutLowestFirstAcrossWords) {
  EXPECT_TRUE(numa_nodes_in_mask({}).empty());
  EXPECT_TRUE(numa_nodes_in_mask({0, 0}).empty());
  EXPECT_EQ(numa_nodes_in_mask({0b1}), std::vector<int>{0});
  EXPECT_EQ(numa_nodes_in_mask({0b1010}), (std::vector<int>{1, 3}));
  // Bit 2 of the second word is node bits_per_word + 2 (66 with 64-bit longs).
  EXPECT_EQ(numa_nodes_in_mask({0b1, 0b100}), (std::vector<int>{0, static_cast<int>(bits_per_word) + 2}));
  EXPECT_EQ(numa_nodes_in_mask({1ul << (bits_per_word - 1)}), std::vector<int>{static_cast<int>(bits_per_word) - 1});
}

TEST(NvmlWithoutDriver, LinkHealthAndAffinityAreAbsentNotMadeUp) {
  const Nvml nvml;
  if (nvml.available()) GTEST_SKIP() << "an NVIDIA driver is present: this checks the driverless path";
  EXPECT_FALSE(nvml.why_unavailable().empty());
  const NvmlLinkHealth health = nvml.link_health(0);
  EXPECT_FALSE(health.pcie_replays.has_value());
  EXPECT_TRUE(health.nvlink_up.empty());
  EXPECT_TRUE(nvml.device_info(0).cpu_numa_nodes.empty());
}

}  // namespace
}  // namespace nodeaudit
