// /proc readers on recorded copies of the files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/node/env.hpp"
#include "harness/node/procfs.hpp"

namespace fs = std::filesystem;
using namespace nodeaudit::procfs;

namespace {
std::string fixture(const std::string& name, const std::string& content) {
  const fs::path p = fs::temp_directory_path() / ("nodeaudit-procfs-" + name + "-" + std::to_string(::getpid()));
  std::ofstream(p) << content;
  return p.string();
}
}  // namespace

TEST(Procfs, Meminfo) {
  const auto m = read_meminfo(fixture("meminfo", "MemTotal:       24576000 kB\nMemAvailable:   1000 kB\nHugePages_Total:       4\n"));
  EXPECT_EQ(m.at("MemTotal"), 24576000ull * 1024);
  EXPECT_EQ(m.at("MemAvailable"), 1024000ull);
  EXPECT_EQ(m.at("HugePages_Total"), 4ull);
}

TEST(Procfs, CpuBusyShare) {
  const auto before = read_cpu_times(fixture("stat1", "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0\n"));
  const auto after = read_cpu_times(fixture("stat2", "cpu  200 0 200 900 100 0 0 0 0 0\ncpu0 100 0 100 450 0 0 0 0\n"));
  // Deltas: user 100, system 100, idle 100, iowait 100 -> busy 200 of 400.
  EXPECT_DOUBLE_EQ(*busy_pct(before.at("cpu"), after.at("cpu")), 50.0);
  EXPECT_DOUBLE_EQ(*iowait_pct(before.at("cpu"), after.at("cpu")), 25.0);
  EXPECT_FALSE(busy_pct(after.at("cpu"), after.at("cpu")).has_value());
  EXPECT_EQ(after.count("cpu0"), 1u);
}

TEST(Procfs, DiskstatsKeepsWholeDisksOnly) {
  const auto d = read_diskstats(fixture("diskstats",
                                        " 259 0 nvme0n1 10 0 2048 5 20 0 4096 7 0 0 0\n"
                                        " 259 1 nvme0n1p1 10 0 1000 5 20 0 1000 7 0 0 0\n"
                                        "   8 0 sda 1 0 8 1 1 0 16 1 0 0 0\n"
                                        "   8 1 sda1 1 0 8 1 1 0 16 1 0 0 0\n"
                                        "   7 0 loop0 1 0 8 1 1 0 16 1 0 0 0\n"));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d.at("nvme0n1").sectors_read, 2048u);
  EXPECT_EQ(d.at("nvme0n1").sectors_written, 4096u);
  EXPECT_EQ(d.at("sda").sectors_written, 16u);
}

TEST(Procfs, NetDev) {
  const auto n = read_netdev(fixture("netdev",
                                     "Inter-|   Receive                                                |  Transmit\n"
                                     " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets\n"
                                     "  eth0: 1000 10 0 0 0 0 0 0 2000 20 0 0 0 0 0 0\n"));
  EXPECT_EQ(n.at("eth0").rx_bytes, 1000u);
  EXPECT_EQ(n.at("eth0").tx_bytes, 2000u);
}

// The firmware strings the fleet report checks for drift, from a recorded copy of /sys/class/dmi/id.
TEST(Env, FirmwareStringsFromDmiWithoutSerials) {
  const fs::path dir = fs::temp_directory_path() / ("nodeaudit-dmi-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "bios_vendor") << "American Megatrends International, LLC.\n";
  std::ofstream(dir / "bios_version") << "2.1a   \n";
  std::ofstream(dir / "bios_date") << "\n";  // empty: left out
  std::ofstream(dir / "board_serial") << "SECRET123\n";
  nlohmann::json host = nlohmann::json::object();
  nodeaudit::add_firmware_strings(host, dir.string());
  fs::remove_all(dir);
  EXPECT_EQ(host, (nlohmann::json{{"bios_vendor", "American Megatrends International, LLC."}, {"bios_version", "2.1a"}}));
}
