// `nodeaudit predict` and `match` end to end: a learn result (written here as `learn` writes one:
// its learned profile's text and the job's own measurements) against recorded node results. The
// expected figures are worked out by hand in the comments from the job's numbers and the node's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/support/cli_expect.hpp"
#include "tests/support/fixtures.hpp"

namespace nodeaudit::proc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* image_profile = R"(name = "learned-images"
description = "an image classification job, learned"
category = "data-throughput-intensive"
[model]
parameters = 1000
dtype = "fp32"
flops_per_sample = 1e6
optimizer = "sgd"
[data]
sample_size = "140KB"
dataset_size = "168MB"
access = "small-files"
decode = "jpeg"
loader = "pytorch"
device_bytes_per_sample = 0
[training]
micro_batch_per_gpu = 32
gradient_accumulation = 1
model_efficiency = 0.4
comm_overlap = 0
target_samples = 1000000
)";

// 100 ms steps on a 2-CPU node without a GPU: 40 ms of compute, 60 ms waiting, 32 samples, 2
// workers; 150 ms of CPU per step in the tree, 30 ms of it in the rank: 120 ms in the loader.
json learn_result() {
  json measured = {{"step_s", 0.1}, {"compute_s", 0.04}, {"data_wait_s", 0.06}, {"fetch_s", 0.0}, {"checkpoint_s", 0.0}, {"samples_per_step", 32},
                   {"world_size", 1}, {"loader_workers", 2}, {"tree_cpu_s", 0.15}, {"ranks_cpu_s", 0.03}, {"cores_available", 2},
                   {"gpu_model", ""}, {"all_reduce_bytes_per_step", 0}};
  json doc = nodeaudit::test_files::fixture_json("results/cpu-only.json");
  doc["env"]["host"]["threads"] = 2, doc["env"]["host"]["cores"] = 2;  // the fixture's CPU model: the same per-core speed
  json entry = doc["probes"].back();  // a whole probe entry of the schema, made learn's
  entry["id"] = "learn.job", entry["status"] = "ok", entry["metrics"] = json::array(), entry["findings"] = json::array();
  entry["info"] = {{"job_measured", measured}, {"profile_toml", image_profile}};
  doc["probes"] = json::array({entry});
  return doc;
}

class PredictCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nodeaudit-predict-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    write("job.json", learn_result());
    json node = nodeaudit::test_files::fixture_json("results/cpu-only.json");
    write("wide.json", node);
    node["env"]["container"] = {{"cpus_allowed", 32}, {"cpu_limit", 1.5}};
    write("quota.json", node);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const json& doc) const { std::ofstream(path(name)) << doc.dump(1); }
  fs::path dir_;
};

TEST_F(PredictCli, CarriesTheJobsOwnMeasurementsToEachNode) {
  const auto r = run_nodeaudit({"predict", path("job.json"), path("wide.json"), path("quota.json"), "--price", "wide=10", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json_output(r);
  const json& wide = doc["cells"][0][0];
  const json& quota = doc["cells"][0][1];
  // wide: 32 CPUs; the loader's 120 ms over its 2 workers = 60 ms > 40 ms of compute: a 60 ms step,
  // a third of it waiting, 32 / 0.06 = 533.3 samples/s; 1e6 samples at 10/h = 1e6 / 533.3 / 3600 h x 10.
  EXPECT_NEAR(wide["step_s"].get<double>(), 0.060, 1e-9) << wide.dump();
  EXPECT_NEAR(wide["data_wait_share"].get<double>(), 1.0 / 3, 1e-9);
  EXPECT_NEAR(wide["samples_per_s"].get<double>(), 32 / 0.06, 1e-6);
  EXPECT_EQ(wide["limiting"], "cpu");
  EXPECT_NEAR(wide["cost"]["run_cost"].get<double>(), 1e6 / (32 / 0.06) / 3600 * 10, 1e-9);
  // quota: 1.5 CPUs: the tree's 150 ms over 1.5 cores = 100 ms; 60 of it waiting.
  EXPECT_NEAR(quota["step_s"].get<double>(), 0.100, 1e-9) << quota.dump();
  EXPECT_NEAR(quota["data_wait_share"].get<double>(), 0.6, 1e-9);
  EXPECT_TRUE(quota["cost"].is_null()) << "no --price for it";
  EXPECT_EQ(doc["best"][0]["best"], "wide");

  // --steps: the cells say which steps they are for; this data set fits the page cache, so a cold
  // start changes nothing (the page cache's warm-up is checked in job_prediction_test.cpp).
  const auto cold = run_nodeaudit({"predict", path("job.json"), path("wide.json"), "--steps", "60", "--warmup", "5", "--format", "json"});
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  const json cold_wide = json_output(cold)["cells"][0][0];
  EXPECT_EQ(cold_wide["run"], (json{{"warmup_steps", 5}, {"steps", 60}, {"page_cache_at_start", "cold"}})) << cold_wide.dump();
  EXPECT_NEAR(cold_wide["step_s"].get<double>(), 0.060, 1e-9);
  EXPECT_FALSE(wide.contains("run")) << "without --steps: a long run's steady state";

  const auto table = run_nodeaudit({"predict", path("job.json"), path("wide.json"), path("quota.json")});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("60 ms"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("33.3%"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("CPU wall-clock, not GPU"), std::string::npos) << table.out;
}

// `score --profile JOB.json` (and `run --profile JOB.json`) judge the node on the job's own
// measurements, through the same model as predict: the same step, the same data wait.
TEST_F(PredictCli, ScoreWithALearnResultAgreesWithPredict) {
  const auto scored = run_nodeaudit({"score", path("quota.json"), "--profile", path("job.json"), "--format", "json"});
  ASSERT_TRUE(scored.exit_code == 0 || scored.exit_code == 1) << scored.err;
  const json assessment = json_output(scored);
  EXPECT_NEAR(assessment["step"]["time_s"].get<double>(), 0.100, 1e-9) << assessment["step"].dump();
  EXPECT_NEAR(assessment["step"]["data_wait_share"].get<double>(), 0.6, 1e-9);
  EXPECT_NE(assessment["demand"].get<std::string>().find("the job's own measurements"), std::string::npos);
  const auto predicted = run_nodeaudit({"predict", path("job.json"), path("quota.json"), "--format", "json"});
  EXPECT_DOUBLE_EQ(assessment["step"]["time_s"].get<double>(), json_output(predicted)["cells"][0][0]["step_s"].get<double>());
}

TEST_F(PredictCli, AFigureTheNodeLacksIsNotJudgedWithTheProbeToRun) {
  json node = nodeaudit::test_files::fixture_json("results/cpu-only.json");
  json kept = json::array();
  for (const auto& probe : node["probes"])
    if (probe["id"] != "storage.dataset") kept.push_back(probe);
  node["probes"] = kept;
  write("no-storage.json", node);
  const auto r = run_nodeaudit({"predict", path("job.json"), path("no-storage.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("storage not judged"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nodeaudit run --only storage.dataset"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(">= 60 ms"), std::string::npos) << "a lower bound, never a figure: " << r.out;
}

TEST_F(PredictCli, MatchNamesTheBestNodeForEachJobInEveryFormat) {
  const auto r = run_nodeaudit({"match", path("job.json"), "cv-resnet50-imagenet", path("wide.json"), path("quota.json"), "--md", path("m.md"),
                                "--html", path("m.html"), "--out", path("m.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("learned-images: best on wide; limited elsewhere by quota: cpu"), std::string::npos) << r.out;
  const json doc = json::parse(std::ifstream(path("m.json")));
  EXPECT_EQ(doc["jobs"].size(), 2u);
  EXPECT_EQ(doc["nodes"], json({"wide", "quota"}));
  std::ifstream html(path("m.html"));
  const std::string page((std::istreambuf_iterator<char>(html)), {});
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("learned-images"), std::string::npos);
  EXPECT_TRUE(fs::exists(path("m.md")));
}

TEST_F(PredictCli, BadInputIsOneLineAndExitTwo) {
  expect_one_line_usage_error(run_nodeaudit({"predict", path("job.json"), path("wide.json"), "--price", "other=3"}), "--price other=3");
  expect_one_line_usage_error(run_nodeaudit({"predict", path("wide.json"), path("quota.json")}), "is a node's result, not a job");
  json old = learn_result();
  old["schema"] = "nodeaudit.result/0";
  write("old.json", old);
  expect_one_line_usage_error(run_nodeaudit({"predict", path("old.json"), path("wide.json")}), "this nodeaudit reads only");
  json incomplete = learn_result();
  incomplete["probes"][0]["info"].erase("job_measured");
  write("incomplete.json", incomplete);
  expect_one_line_usage_error(run_nodeaudit({"predict", path("incomplete.json"), path("wide.json")}), "no job_measured block");
  expect_one_line_usage_error(run_nodeaudit({"match", path("wide.json"), path("quota.json")}), "needs at least one job");
  expect_one_line_usage_error(run_nodeaudit({"predict", path("job.json"), path("wide.json"), "--steps", "0"}), "--steps 0: must be a whole number from 1 to 1000000");
  expect_one_line_usage_error(run_nodeaudit({"predict", path("job.json"), path("wide.json"), "--steps", "2e3"}), "--steps 2e3");
  expect_one_line_usage_error(run_nodeaudit({"predict", path("job.json"), path("wide.json"), "--warmup", "5"}), "--warmup 5: needs --steps");
  expect_one_line_usage_error(run_nodeaudit({"match", path("job.json"), path("wide.json"), "--steps", "60", "--warmup", "-1"}), "--warmup -1");
}

}  // namespace
}  // namespace nodeaudit::proc
