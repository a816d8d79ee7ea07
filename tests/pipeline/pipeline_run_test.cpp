// pipeline.step on a generated data set with real io_uring reads and emulated compute: AU when
// compute dominates and when the loader is starved, stage times against wall time, and a read
// error mid-run (a sample file truncated after generation) that stops with partial metrics.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "dataset_loader.hpp"
#include "generated_data.hpp"
#include "pipeline_run.hpp"
#include "pipeline_test_support.hpp"

namespace nodeaudit::pipeline {
namespace {

TEST(PipelineRun, ComputeDominatedRunKeepsTheGpuBusy) {
  Scratch dir;
  const ProbeRun run = run_pipeline_probe(
      dir.path, 64,
      {{"compute-time", "50ms"}, {"batch-size", "8"}, {"steps", "8"}, {"workers", "2"}, {"queue-depth", "4"}});
  SKIP_WITHOUT_URING(run);
  ASSERT_EQ(run.outcome.status, Status::ok) << run.outcome.reason;
  EXPECT_GT(run.values.at("au"), 90.0);
  EXPECT_LE(run.values.at("au"), 100.0);
  // 7 timed steps x 8 samples in at least 7 x 50 ms.
  EXPECT_LE(run.values.at("samples_per_s"), 8 / 0.050 * 1.001);
  EXPECT_EQ(run.info["steps_completed"], 8);
  EXPECT_EQ(run.info["samples_per_step"], 8);
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(PipelineRun, StarvedLoaderLowersAuAndShowsDataWait) {
  Scratch dir;
  const std::map<std::string, std::string> starved{{"compute-time", "0.5ms"}, {"batch-size", "256"}, {"steps", "12"},
                                                   {"workers", "1"},          {"queue-depth", "1"},  {"io-depth", "1"}};
  const ProbeRun slow = run_pipeline_probe(dir.path, 2000, starved);
  SKIP_WITHOUT_URING(slow);
  ASSERT_EQ(slow.outcome.status, Status::ok) << slow.outcome.reason;
  const ProbeRun busy =
      run_pipeline_probe(dir.path, 64, {{"compute-time", "50ms"}, {"batch-size", "8"}, {"steps", "6"}});
  ASSERT_EQ(busy.outcome.status, Status::ok) << busy.outcome.reason;
  // 256 whole-file reads one at a time take far longer than 0.5 ms on any storage, page cache included.
  EXPECT_LT(slow.values.at("au"), 50.0);
  EXPECT_LT(slow.values.at("au"), busy.values.at("au") - 40);
  EXPECT_GT(slow.values.at("stage_busy_pct[data_wait]"), 50.0);
  EXPECT_GT(slow.values.at("data_wait_s"), 0.0);
}

TEST(PipelineRun, StageTimesAccountForWallTime) {
  Scratch dir;
  const ProbeRun run = run_pipeline_probe(
      dir.path, 500,
      {{"compute-time", "2ms"}, {"batch-size", "32"}, {"steps", "20"}, {"workers", "2"}, {"queue-depth", "2"}});
  SKIP_WITHOUT_URING(run);
  ASSERT_EQ(run.outcome.status, Status::ok) << run.outcome.reason;
  const nlohmann::json& t = run.info["timed"];
  const double wall = t["wall_s"].get<double>();
  const double stages = t["compute_s"].get<double>() + t["data_wait_s"].get<double>() +
                        t["communication_s"].get<double>() + t["checkpoint_s"].get<double>();
  EXPECT_GT(wall, 0);
  EXPECT_GE(stages / wall, 0.98);
  EXPECT_LE(stages / wall, 1.0 + 1e-9);
  double pct = 0;
  for (const char* stage : {"compute", "data_wait", "communication", "checkpoint", "other"})
    pct += run.values.at(std::string("stage_busy_pct[") + stage + "]");
  EXPECT_NEAR(pct, 100.0, 1e-6);
  EXPECT_NEAR(run.values.at("au_with_checkpoint"), run.values.at("stage_busy_pct[compute]"), 1e-9);
  // au leaves the checkpoint stalls out of the wall time; it can only be the higher of the two.
  EXPECT_GE(run.values.at("au"), run.values.at("au_with_checkpoint"));
  // The profile writes checkpoints: two in a 20-step run, the file removed afterwards.
  EXPECT_EQ(run.info["checkpoints"]["written"], 2);
  EXPECT_EQ(dir.entries(), 0u);
}

TEST(PipelineRun, TruncatedSampleStopsCleanlyWithPartialMetrics) {
  Scratch dir;
  // One worker, one batch in flight, batch 8: the sample at position 40 of the shuffled order is
  // read in step 5, after steps 0..4 were consumed.
  const ProbeRun run = run_pipeline_probe(
      dir.path, 64,
      {{"compute-time", "1ms"}, {"batch-size", "8"}, {"steps", "20"}, {"workers", "1"}, {"queue-depth", "1"}},
      [](const std::vector<std::string>& files) {
        const io::EpochPlan plan = io::make_epoch_plan(files, 4096, false, 0x5eed);
        ASSERT_EQ(truncate(files[plan.order[40]].c_str(), 100), 0);
      });
  SKIP_WITHOUT_URING(run);
  ASSERT_EQ(run.outcome.status, Status::failed);
  EXPECT_FALSE(run.outcome.reason.empty());
  EXPECT_EQ(run.info["steps_completed"], 5);
  EXPECT_TRUE(run.values.count("au"));  // partial figures over the 4 timed steps
  EXPECT_EQ(run.info["timed"]["steps"], 4);
  bool read_error = false;
  for (const Finding& f : run.findings) read_error |= f.code == "pipeline.read_error" && f.severity == Severity::fail;
  EXPECT_TRUE(read_error);
  EXPECT_EQ(dir.entries(), 0u);  // data set and checkpoint file gone
}

TEST(PipelineRun, UnknownGpuFailsNamingTheAcceptedNames) {
  ProbeContext ctx = make_context({{"emulate-compute", "v100"}});
  PipelinePlan plan;
  EXPECT_EQ(make_plan(ctx, plan), "--emulate-compute v100: unknown GPU; accepted: h100, h200, a100, l40s, none");
}

}  // namespace
}  // namespace nodeaudit::pipeline
