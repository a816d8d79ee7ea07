// Disturbance: foreign CPU and disk use from two host readings and the probe's own use.
#include <gtest/gtest.h>

#include "harness/node/disturbance.hpp"

using namespace nodeaudit;

namespace {

// One reading of the counters; `own_*` are nodeaudit's (this process and the children it reaped).
HostLoadReading reading(double wall_s, double cpu_busy_s, double disk_bytes, double own_cpu_s = 0,
                        double own_disk_bytes = 0) {
  HostLoadReading r;
  r.wall_s = wall_s, r.cpu_busy_s = cpu_busy_s, r.disk_bytes = disk_bytes;
  r.own_cpu_s = own_cpu_s, r.own_disk_bytes = own_disk_bytes;
  return r;
}

}  // namespace

TEST(Disturbance, TheProbesOwnAndTheRunnersCpuAreNotForeign) {
  // 10 s on 4 CPUs; 30 CPU-seconds busy, 29.5 of them the probe's and the runner's: 0.5 foreign (1.25%).
  const nlohmann::json d = judge_disturbance(reading(0, 0, 0, 100), reading(10, 30, 0, 129.5), 4);
  EXPECT_NEAR(d["cpu_foreign_s"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(d["cpu_foreign_share_pct"].get<double>(), 1.25, 1e-9);
  EXPECT_FALSE(d["disturbed"].get<bool>());
  EXPECT_FALSE(d.contains("evidence"));
}

TEST(Disturbance, ForeignCpuPastTheThresholdIsEvidence) {
  // 2 CPUs, 10 s: the probe used 10 CPU-seconds, something else 9.6 more.
  const nlohmann::json d = judge_disturbance(reading(0, 0, 0), reading(10, 19.6, 0, 10), 2);
  EXPECT_TRUE(d["disturbed"].get<bool>());
  EXPECT_EQ(d["evidence"], "other processes used 9.6 CPU-seconds in 10.0 s, 48% of the 2 CPUs (threshold 5%)");
  EXPECT_DOUBLE_EQ(d["thresholds"]["cpu_share_pct"].get<double>(), 5.0);
}

TEST(Disturbance, HypervisorStealIsForeignLoadAndNamedAsSuch) {
  // 2 CPUs, 10 s: the probe used 10 CPU-seconds; the hypervisor gave 3 CPU-seconds to another guest.
  HostLoadReading after = reading(10, 13, 0, 10);
  after.cpu_steal_s = 3;
  const nlohmann::json d = judge_disturbance(reading(0, 0, 0), after, 2);
  EXPECT_TRUE(d["disturbed"].get<bool>());
  EXPECT_DOUBLE_EQ(d["cpu_steal_s"].get<double>(), 3.0);
  EXPECT_EQ(d["evidence"], "other processes used 3.0 CPU-seconds in 10.0 s, 15% of the 2 CPUs (threshold 5%), of "
                           "which 3.0 CPU-seconds hypervisor steal (/proc/stat)");
}

TEST(Disturbance, ForeignDiskTrafficPastTheThresholdIsEvidence) {
  // The probe read 1 GB itself; 500 MB more moved in 10 s: 50 MB/s foreign.
  const nlohmann::json d = judge_disturbance(reading(0, 0, 0), reading(10, 0, 1.5e9, 0, 1e9), 2);
  EXPECT_TRUE(d["disturbed"].get<bool>());
  EXPECT_NEAR(d["disk_foreign_bytes_per_s"].get<double>(), 50e6, 1);
  EXPECT_NE(d["evidence"].get<std::string>().find("500 MB on the disks, 50.0 MB/s"), std::string::npos)
      << d["evidence"];
  const nlohmann::json own_only = judge_disturbance(reading(0, 0, 0), reading(10, 0, 1e9, 0, 1e9), 2);
  EXPECT_FALSE(own_only["disturbed"].get<bool>());
}

TEST(Disturbance, RunPrintsOneWarningLineForADisturbedProbe) {
  nlohmann::json entry = {{"id", "host.decode"},
                          {"disturbed", true},
                          {"disturbance", {{"evidence", "other processes used 48% of the 2 CPUs"}}}};
  EXPECT_EQ(disturbance_warning(entry),
            "warning: host.decode was disturbed: other processes used 48% of the 2 CPUs; compare will not call a "
            "regression from its figures\n");
  entry["disturbed"] = false;
  EXPECT_EQ(disturbance_warning(entry), "");
}

TEST(Disturbance, AnotherProcessOnAGpuIsEvidence) {
  const std::vector<ForeignGpuProcess> others = {{4242, 0, "python3", 10.5e9}, {4343, 1, "", std::nullopt}};
  const nlohmann::json d = judge_disturbance(reading(0, 0, 0), reading(10, 0, 0), 2, others);
  EXPECT_TRUE(d["disturbed"].get<bool>());
  EXPECT_EQ(d["evidence"],
            "other processes held a compute context on the GPUs: pid 4242 (python3, 10.5 GB) on GPU 0, pid 4343 (?) on "
            "GPU 1");
  ASSERT_EQ(d["gpu_foreign_processes"].size(), 2u);
  EXPECT_EQ(d["gpu_foreign_processes"][0]["pid"], 4242);
}

TEST(Disturbance, AProbeShorterThanASecondIsNotJudged) {
  const nlohmann::json d = judge_disturbance(reading(0, 0, 0), reading(0.2, 0.4, 0), 2);
  EXPECT_FALSE(d["disturbed"].get<bool>());
  EXPECT_EQ(d["note"], "not judged: shorter than 1 s");
}
