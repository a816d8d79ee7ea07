// GPU telemetry of a learn run, from samples of a fake device: hand-made NVML readings (no GPU on
// the test machine; named so here and nowhere else) through job_load, the result entry and the
// summary. Two GPUs: the job's processes hold a context on GPU 1 only, so GPU 0 (another job's) is
// left out; readings outside the measured steps are left out.
#include <gtest/gtest.h>

#include "harness/learn/learn_document.hpp"
#include "harness/learn/learn_summary.hpp"

namespace nodeaudit::learn {
namespace {

using nlohmann::json;

JobRun run_with_fake_gpu_readings() {
  JobRun run;
  run.measured_from_s = 1.0;
  run.measured_to_s = 3.0;
  // t = 0.5 is before the measured steps: its 5% and 1 GB must not count.
  const double utils[] = {5, 80, 90, 70};
  const double mems[] = {1e9, 20e9, 22e9, 21e9};
  const double times[] = {0.5, 1.5, 2.0, 2.5};
  for (int i = 0; i < 4; ++i) {
    ProcessSample s{times[i], 1.0, std::nullopt, std::nullopt, 3, {}};
    s.gpus.push_back({0, 99.0, 70e9, false});  // fake GPU 0: another job's
    s.gpus.push_back({1, utils[i], mems[i], true});
    run.samples.push_back(s);
  }
  json rank = {{"gpu", {{"name", "fake device"}, {"peak_allocated_bytes", 18e9}}}};
  run.records.ranks.push_back(rank);
  return run;
}

TEST(JobLoad, GpuTelemetryOfTheJobsGpusOverTheMeasuredSteps) {
  const JobRun run = run_with_fake_gpu_readings();
  const JobLoad load = job_load(run);
  ASSERT_EQ(load.gpus.size(), 1u);
  EXPECT_EQ(load.gpus[0].index, 1);
  EXPECT_EQ(load.gpus[0].util_pct, (std::vector<double>{80, 90, 70}));
  EXPECT_EQ(load.gpus[0].mem_used_bytes, (std::vector<double>{20e9, 22e9, 21e9}));
  EXPECT_EQ(load.peak_allocated_bytes, std::vector<double>{18e9});

  const LearnedJob job;
  const json entry = learn_probe_entry(job, run, LearnRunInfo{});
  const json gpu = entry["info"]["gpu"];
  ASSERT_EQ(gpu["telemetry"].size(), 1u) << gpu.dump();
  EXPECT_EQ(gpu["telemetry"][0]["util_pct_median"], 80.0);
  EXPECT_EQ(gpu["telemetry"][0]["mem_used_bytes_max"], 22e9);
  EXPECT_EQ(gpu["telemetry"][0]["job_processes_found"], true);
  EXPECT_EQ(gpu["peak_allocated"][0]["peak_allocated_bytes"], 18e9);
  bool util_metric = false;
  for (const auto& m : entry["metrics"])
    if (m["name"] == "gpu_utilization") {
      util_metric = true;
      EXPECT_EQ(m["labels"]["gpu"], "1");
    }
  EXPECT_TRUE(util_metric) << entry["metrics"].dump();

  const std::string summary = render_learn_summary(job, load, SummaryPaths{"python train.py", "r.json", "", ""});
  EXPECT_NE(summary.find("GPU 1: utilization 80% median, memory in use up to 20.5 GiB; peak allocated 16.8 GiB (largest rank)"), std::string::npos)
      << summary;
}

// NVML lists the host's PIDs; in a container the job's are not among them: every GPU is kept, and
// said not to be known as the job's.
TEST(JobLoad, WhenTheJobsProcessesAreNotAmongNvmlsEveryGpuIsKeptAndSaidSo) {
  JobRun run;
  for (double t : {0.5, 1.0}) {
    ProcessSample s{t, 1.0, std::nullopt, std::nullopt, 3, {}};
    s.gpus.push_back({0, 50.0, 10e9, false});  // fake GPU readings, as from a container
    s.gpus.push_back({1, 60.0, 12e9, false});
    run.samples.push_back(s);
  }
  EXPECT_TRUE(job_load(run).gpus.empty()) << "no rank used CUDA: the GPUs are other jobs'";
  EXPECT_EQ(job_load(run).gpu_not_measured, "the job did not use CUDA (no compute context, no rank allocated GPU memory)");
  run.records.ranks.push_back({{"gpu", {{"name", "fake device"}, {"peak_allocated_bytes", 1e9}}}});
  const JobLoad load = job_load(run);
  ASSERT_EQ(load.gpus.size(), 2u);
  const json telemetry = learn_probe_entry(LearnedJob{}, run, LearnRunInfo{})["info"]["gpu"]["telemetry"];
  EXPECT_EQ(telemetry[0]["job_processes_found"], false);
  EXPECT_NE(render_learn_summary(LearnedJob{}, load, SummaryPaths{}).find("every GPU: the job's processes were not among those NVML listed"),
            std::string::npos);
}

TEST(JobLoad, WithoutNvmlEveryGpuFigureSaysNotMeasuredAndWhy) {
  JobRun run;
  run.gpu_not_measured = "no GPU: no NVIDIA driver (libnvidia-ml.so.1 could not be loaded)";
  const JobLoad load = job_load(run);
  const json gpu = learn_probe_entry(LearnedJob{}, run, LearnRunInfo{})["info"]["gpu"];
  EXPECT_EQ(gpu["telemetry_not_measured"], "not measured: " + run.gpu_not_measured);
  EXPECT_EQ(gpu["peak_allocated_not_measured"], "not measured: " + run.gpu_not_measured);
  EXPECT_NE(render_learn_summary(LearnedJob{}, load, SummaryPaths{}).find("GPU                   not measured: no GPU: no NVIDIA driver"),
            std::string::npos);
}

}  // namespace
}  // namespace nodeaudit::learn
