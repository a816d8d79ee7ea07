// The synchronous checkpoint stall in the run cost, through `nodeaudit score`: a profile with a
// checkpoint size and interval, a result with storage.checkpoint, and the cost checked by hand.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/cli_expect.hpp"

namespace {

// `nodeaudit score ARGS` with the shipped profiles' folder: stdout and stderr together, and the exit code.
std::string run_score(const std::string& args, int& exit_code) {
  const auto r = nodeaudit::proc::run_nodeaudit_merged(
      "score " + args, {.environment = {{"NODEAUDIT_PROFILE_DIR", NODEAUDIT_PROFILES}}});
  exit_code = r.exit_code;
  return r.out;
}

nlohmann::json write_bandwidth_metric(const std::string& shards, double gbps) {
  return {{"name", "write_bandwidth"}, {"unit", "GB/s"}, {"better", "higher"}, {"labels", {{"shards", shards}}},
          {"n", 1}, {"median", gbps}, {"mean", gbps}, {"min", gbps}, {"max", gbps}, {"p5", gbps}, {"p95", gbps},
          {"stdev", 0}, {"cv", 0}, {"ci95", {gbps, gbps}}, {"samples", {gbps}}};
}

class CheckpointCost : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("nodeaudit-ckpt-cost-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    // balance-test with a 40 GB checkpoint every 100 s ([training] is its last table).
    std::ifstream base(std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml");
    std::ofstream(profile()) << base.rdbuf() << "checkpoint_size = \"40GB\"\ncheckpoint_interval = \"100s\"\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string profile() const { return (dir_ / "checkpointing.toml").string(); }
  // balanced.json, with storage.checkpoint measured at `gbps` per shard count when given.
  std::string result(const std::vector<std::pair<std::string, double>>& write_gbps) const {
    std::ifstream in(std::string(NODEAUDIT_FIXTURES) + "/results/balanced.json");
    nlohmann::json doc = nlohmann::json::parse(in);
    doc.erase("assessment");
    if (!write_gbps.empty()) {
      nlohmann::json probe = {{"id", "storage.checkpoint"}, {"status", "ok"}, {"reason", ""}, {"params", nlohmann::json::object()},
                              {"duration_s", 10}, {"metrics", nlohmann::json::array()}, {"findings", nlohmann::json::array()},
                              {"info", nlohmann::json::object()}, {"telemetry", nlohmann::json::object()}};
      for (const auto& [shards, gbps] : write_gbps) probe["metrics"].push_back(write_bandwidth_metric(shards, gbps));
      doc["probes"].push_back(probe);
    }
    const std::string path = (dir_ / ("result-" + std::to_string(write_gbps.size()) + ".json")).string();
    std::ofstream(path) << doc.dump(2);
    return path;
  }
  std::filesystem::path dir_;
};

// balanced.json on balance-test: 32 samples per 0.0195 s step, 1e6 samples, 20 an hour, 1 ops cost.
constexpr double run_hours_without_stalls = 1e6 * 0.0195 / 32 / 3600;

TEST_F(CheckpointCost, StallsAtTheBestMeasuredWriteRateLengthenTheCostedRun) {
  int exit_code = -1;
  const std::string out = run_score(result({{"1", 2.0}, {"8", 4.0}}) + " --profile " + profile() +
                                        " --price-per-hour 20 --ops-cost 1 --format json",
                                    exit_code);
  ASSERT_EQ(exit_code, 0) << out;
  const auto assessment = nlohmann::json::parse(out);
  // 40 GB at the best series, 4 GB/s: a 10 s stall every 100 s adds a tenth to the wall time.
  const auto& checkpoint = assessment["checkpoint"];
  EXPECT_NEAR(checkpoint["write_s"].get<double>(), 10.0, 1e-9) << checkpoint.dump();
  EXPECT_NEAR(checkpoint["wall_share"].get<double>(), 0.1, 1e-12);
  EXPECT_NEAR(assessment["cost"]["run_cost"].get<double>(), 20 * run_hours_without_stalls * 1.1 + 1, 1e-9) << assessment["cost"].dump();
  EXPECT_FALSE(assessment["cost"].contains("note")) << assessment["cost"].dump();
}

TEST_F(CheckpointCost, WithoutTheCheckpointProbeTheCostSaysStallsAreLeftOut) {
  int exit_code = -1;
  const std::string out = run_score(result({}) + " --profile " + profile() + " --price-per-hour 20 --ops-cost 1 --format json", exit_code);
  ASSERT_EQ(exit_code, 0) << out;
  const auto assessment = nlohmann::json::parse(out);
  EXPECT_NEAR(assessment["cost"]["run_cost"].get<double>(), 20 * run_hours_without_stalls + 1, 1e-9);
  EXPECT_EQ(assessment["cost"]["note"].get<std::string>().rfind("checkpoint stalls not included (", 0), 0u) << assessment["cost"].dump();
}

}  // namespace
