// host.memory-bandwidth end to end: both store kinds and both page sizes run, verify the arrays'
// final values (the probe fails on a wrong element), and say in info what they used, the vector
// set included.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/kernels/host/cpuinfo_isa.hpp"
#include "tests/support/cli_expect.hpp"

namespace {

nlohmann::json probe_json(const std::string& args) {
  const auto r = nodeaudit::proc::run_nodeaudit_line("probe host.memory-bandwidth --format json " + args);
  return nodeaudit::proc::json_output(r)["probes"][0];
}

TEST(MemoryBandwidthCli, StreamingStoresOnHugePagesByDefaultAndSaidSo) {
  const nlohmann::json probe = probe_json("--repetitions 2 --array-size 64MiB");
  ASSERT_EQ(probe["status"], "ok") << probe.dump();
  EXPECT_EQ(probe["params"]["stores"], "streaming");
  EXPECT_TRUE(probe["info"]["huge_pages"]["advised"].get<bool>());
  EXPECT_TRUE(probe["info"]["huge_pages"].contains("anon_huge_page_bytes"));
  const std::string stores = probe["info"]["stores"];
  EXPECT_TRUE(stores.rfind("streaming", 0) == 0 || stores.find("no streaming stores") != std::string::npos) << stores;
  std::set<std::string> kernels;
  for (const auto& m : probe["metrics"]) kernels.insert(m["labels"]["kernel"].get<std::string>());
  EXPECT_EQ(kernels, (std::set<std::string>{"copy", "scale", "add", "triad", "memcpy"}));
  const std::string cpu_isa = nodeaudit::host::widest_isa_in_cpuinfo();
  if (!cpu_isa.empty()) EXPECT_EQ(probe["info"]["isa"], cpu_isa) << "the widest vector set /proc/cpuinfo lists";
  EXPECT_GT(probe["info"]["memcpy"]["slice_bytes"].get<double>(), 0) << probe["info"].dump();
}

TEST(MemoryBandwidthCli, CachedStoresOnBasePagesStillVerify) {
  const nlohmann::json probe = probe_json("--repetitions 2 --array-size 64MiB --stores cached --huge-pages false");
  ASSERT_EQ(probe["status"], "ok") << probe.dump();
  EXPECT_EQ(probe["info"]["stores"], "cached (ordinary stores: write-allocate reads not counted)");
  EXPECT_FALSE(probe["info"]["huge_pages"]["advised"].get<bool>());
  // At the quick level --repetitions is the total over its two rounds: one each.
  EXPECT_EQ(probe["rounds"], 2);
  for (const auto& m : probe["metrics"]) EXPECT_EQ(m["n"], 2) << m.dump();
}

}  // namespace
