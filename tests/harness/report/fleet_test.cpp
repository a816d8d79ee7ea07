// The fleet report over a generated 20-node fleet (tests/harness/report/fleet_fixture.hpp): the slow node
// and the outlier GPU are named with their figures, the driver on 3 of 20 nodes is listed as drift,
// a disturbed figure is shown but not judged, and the Markdown matches its golden file.
#include <gtest/gtest.h>

#include <map>

#include "harness/core/errors.hpp"
#include "harness/report/fleet_judge.hpp"
#include "harness/report/fleet_render.hpp"
#include "tests/harness/report/fleet_fixture.hpp"

using namespace nodeaudit;
using namespace nodeaudit::report;
using namespace nodeaudit::test;

namespace {

FleetInput fleet_of(int nodes) {
  FleetInput fleet;
  for (const auto& [file, doc] : generated_fleet(nodes)) add_result(fleet, file, doc);
  return fleet;
}

bool any_reason(const FleetVerdict& verdict, std::size_t node, const std::string& needle) {
  for (const auto& reason : verdict.reasons[node])
    if (reason.find(needle) != std::string::npos) return true;
  return false;
}

std::size_t failing(const FleetVerdict& verdict) {
  std::size_t count = 0;
  for (const auto& reasons : verdict.reasons) count += reasons.empty() ? 0 : 1;
  return count;
}

}  // namespace

TEST(FleetRobustStats, MedianAndMadWithAFloor) {
  const FleetOptions options;  // 3 MADs, 5% floor
  const RobustStats spread = robust_stats({100, 102, 98, 101, 99, 60}, true, options);
  EXPECT_DOUBLE_EQ(spread.median, 99.5);
  EXPECT_DOUBLE_EQ(spread.mad, 1.5);
  EXPECT_DOUBLE_EQ(spread.limit, 99.5 - 3 * 1.4826 * 1.5) << "3 scaled MADs (6.7) exceed the 5% floor (4.975)";
  EXPECT_TRUE(is_worse(60, spread, true));
  EXPECT_FALSE(is_worse(98, spread, true));
  const RobustStats tight = robust_stats({100, 100.5, 99.5, 100, 100}, true, options);
  EXPECT_DOUBLE_EQ(tight.limit, 95) << "MAD 0: the floor keeps noise from failing a node";
  const RobustStats noisy = robust_stats({100, 120, 80, 110, 90}, true, options);
  EXPECT_DOUBLE_EQ(noisy.limit, 100 - 3 * 1.4826 * 10) << "a wide fleet widens the limit past the floor";
  const RobustStats latency = robust_stats({10, 10, 10, 10}, false, options);
  EXPECT_DOUBLE_EQ(latency.limit, 10.5) << "lower is better: the limit is above the median";
  const RobustStats errors = robust_stats({0, 0, 0, 0}, false, options);
  EXPECT_TRUE(is_worse(1, errors, false)) << "any error where the fleet has none";
}

TEST(Fleet, SlowNodeAndOutlierGpuAreNamedWithTheirFigures) {
  const FleetInput fleet = fleet_of(20);
  const FleetVerdict verdict = judge_fleet(fleet, {});
  const std::size_t node07 = fleet.node_index.at("node-07"), node12 = fleet.node_index.at("node-12");
  EXPECT_TRUE(any_reason(verdict, node07, "gpu.gemm tflops [dtype=bf16] (median GPU): "));
  EXPECT_TRUE(any_reason(verdict, node07, "below the fleet median"));
  EXPECT_TRUE(any_reason(verdict, node12, "GPU 3 gpu.gemm tflops [dtype=bf16]: "));
  EXPECT_TRUE(any_reason(verdict, node12, "below the node's best GPU"));
  EXPECT_FALSE(any_reason(verdict, node12, "GPU 2 ")) << "only GPU 3 is slow";
  EXPECT_EQ(failing(verdict), 2u) << "node-07 and node-12; drift fails no node by default";
  EXPECT_EQ(verdict.failed_nodes, 2u);
  bool gpu3_listed = false;
  for (const auto& outlier : verdict.gpu_outliers) {
    EXPECT_EQ(outlier.node, node12) << "node-07's GPUs are named once, as the node";
    gpu3_listed = gpu3_listed || (outlier.gpu == 3 && outlier.node_best && outlier.fleet_median);
  }
  EXPECT_TRUE(gpu3_listed);
}

TEST(Fleet, DriverOnThreeOfTwentyNodesIsListedAsDrift) {
  const FleetInput fleet = fleet_of(20);
  const FleetVerdict verdict = judge_fleet(fleet, {});
  ASSERT_EQ(verdict.drift.size(), 1u);
  const DriftSetting& driver = verdict.drift.front();
  EXPECT_EQ(driver.setting, "software.driver");
  ASSERT_EQ(driver.values.size(), 2u);
  EXPECT_EQ(driver.values[0].value, "550.54.15");
  EXPECT_EQ(driver.values[0].nodes.size(), 17u);
  EXPECT_EQ(driver.values[1].value, "550.90.07");
  std::vector<std::string> names;
  for (const std::size_t n : driver.values[1].nodes) names.push_back(fleet.nodes[n].name);
  EXPECT_EQ(names, (std::vector<std::string>{"node-03", "node-09", "node-15"}));
  FleetOptions strict;
  strict.fail_on_drift = true;
  const FleetVerdict gated = judge_fleet(fleet, strict);
  EXPECT_EQ(gated.failed_nodes, 5u);
  EXPECT_TRUE(
      any_reason(gated, fleet.node_index.at("node-09"), "software.driver is `550.90.07`; most nodes: `550.54.15`"));
}

TEST(Fleet, DisturbedFiguresAreShownNotJudged) {
  const FleetInput fleet = fleet_of(20);
  const FleetVerdict verdict = judge_fleet(fleet, {});
  EXPECT_TRUE(verdict.reasons[fleet.node_index.at("node-18")].empty()) << "its storage.read ran beside foreign load";
  const std::string md = render_fleet_markdown(fleet, verdict);
  EXPECT_NE(md.find("bandwidth [block_size=1048576, cache=none, pattern=seq, workers=4] (1 disturbed, not judged)"),
            std::string::npos);
}

TEST(Fleet, ThresholdsAreOptions) {
  const FleetInput fleet = fleet_of(20);
  FleetOptions lenient;
  lenient.gpu_below_best_pct = 20;
  lenient.outlier_floor_pct = 25;
  const FleetVerdict verdict = judge_fleet(fleet, lenient);
  EXPECT_TRUE(verdict.reasons[fleet.node_index.at("node-07")].empty()) << "a 20% slow node passes a 25% floor";
  const auto& node12 = verdict.reasons[fleet.node_index.at("node-12")];
  ASSERT_EQ(node12.size(), 1u) << "GPU 3's 15% passes a 20% in-node rule; the node's GEMM spread of 15% still fails";
  EXPECT_EQ(node12.front().rfind("gpu.gemm spread_pct [dtype=bf16]: 15.3 %", 0), 0u) << node12.front();
}

TEST(Fleet, FewerNodesThanNeededAreNotJudgedButGpusStillAre) {
  const FleetInput fleet = fleet_of(2);
  const FleetVerdict verdict = judge_fleet(fleet, {});
  for (const auto& figure : verdict.figures) EXPECT_EQ(figure.not_judged, "2 nodes with this figure; 3 needed");
  EXPECT_EQ(verdict.failed_nodes, 0u);
}

TEST(Fleet, OneResultPerNode) {
  FleetInput fleet;
  const auto docs = generated_fleet(1);
  add_result(fleet, "a/node-01.json", docs[0].second);
  try {
    add_result(fleet, "b/node-01.json", docs[0].second);
    FAIL() << "a second result of node-01 was taken";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "node name 'node-01': held by both a/node-01.json and b/node-01.json; a fleet report takes one "
                 "result per node (leave one out)");
  }
}

TEST(FleetMarkdown, TwentyGeneratedNodesMatchGolden) {
  const FleetInput fleet = fleet_of(20);
  expect_matches_golden(render_fleet_markdown(fleet, judge_fleet(fleet, {})), "fleet-twenty-nodes.md");
}

TEST(FleetDrift, VbiosOfOneGpuAndACheckFindingAreListedWithTheirNodes) {
  FleetInput fleet;
  for (auto& [file, doc] : generated_fleet(6)) {
    const std::string host = doc["env"]["host"]["hostname"];
    for (auto& gpu : doc["env"]["gpus"])
      gpu["vbios_version"] = host == "node-05" && gpu["index"] == 2 ? "96.00.74.00.0B" : "96.00.89.00.01";
    const bool powersave = host == "node-06";
    nlohmann::json finding = {{"severity", powersave ? "warn" : "info"},
                              {"code", "host_config.governor"},
                              {"message", powersave ? "cpufreq governor powersave on 64 CPUs" : "cpufreq governor performance"}};
    doc["probes"].push_back({{"id", "host.config"}, {"status", "ok"}, {"reason", ""}, {"params", nlohmann::json::object()},
                             {"duration_s", 0.1}, {"metrics", nlohmann::json::array()}, {"findings", {finding}},
                             {"info", nlohmann::json::object()}, {"telemetry", nlohmann::json::object()}});
    add_result(fleet, file, doc);
  }
  const FleetVerdict verdict = judge_fleet(fleet, {});
  std::map<std::string, const DriftSetting*> by_setting;
  for (const auto& setting : verdict.drift) by_setting[setting.setting] = &setting;
  ASSERT_TRUE(by_setting.count("gpu.vbios_version"));
  const DriftSetting& vbios = *by_setting["gpu.vbios_version"];
  ASSERT_EQ(vbios.values.size(), 2u);
  EXPECT_EQ(vbios.values[0].value, "96.00.89.00.01");
  EXPECT_EQ(vbios.values[1].value, "96.00.89.00.01 (GPUs 0, 1, 3, 4, 5, 6, 7); 96.00.74.00.0B (GPU 2)");
  EXPECT_EQ(vbios.values[1].nodes, (std::vector<std::size_t>{fleet.node_index.at("node-05")}));
  ASSERT_TRUE(by_setting.count("host.config host_config.governor"));
  const DriftSetting& governor = *by_setting["host.config host_config.governor"];
  EXPECT_EQ(governor.values[1].value, "warn");
  EXPECT_EQ(governor.values[1].example, "cpufreq governor powersave on 64 CPUs");
  const std::string md = render_fleet_markdown(fleet, verdict);
  EXPECT_NE(md.find("|  | `warn`: cpufreq governor powersave on 64 CPUs | node-06 (1) |"), std::string::npos) << md.substr(0, 4000);
}
