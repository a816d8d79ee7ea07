// host.dataloader's strict reading of the Python side's report, and the sweep's arithmetic, on
// hand-made lines (the real script runs in dataloader_cli_test.cpp).
#include <gtest/gtest.h>

#include "pipeline/dataloader/loader_report.hpp"

namespace nodeaudit::dataloader {
namespace {

const std::string loader_line =
    R"({"kind": "loader", "python": "3.11.7", "torch": "2.15.0", "torchvision": "0.29.2", "cpus": 2})";

std::string point_line(const std::string& decoder, int workers, int batches, double seconds) {
  return R"({"kind": "point", "decoder": ")" + decoder + R"(", "workers": )" + std::to_string(workers) +
         R"(, "batch": 16, "batches": )" + std::to_string(batches) + R"(, "samples": )" + std::to_string(16 * batches) +
         R"(, "seconds": )" + std::to_string(seconds) + R"(, "cpu_seconds": 1.5, "pin_memory": false})";
}

TEST(DataLoaderReport, ACompleteReportGivesItsPointsAndNotes) {
  const std::string text = loader_line + "\n" + R"({"kind": "decoder_skipped", "decoder": "dali", "why": "not importable"})" +
                           "\n" + point_line("pil", 1, 4, 2.0) + "\n" + point_line("pil", 2, 4, 1.0) + "\n" +
                           R"({"kind": "done"})" + "\n";
  const ParsedReport parsed = parse_loader_report(text);
  ASSERT_EQ(parsed.error, "");
  EXPECT_TRUE(parsed.report.done);
  ASSERT_EQ(parsed.report.points.size(), 2u);
  EXPECT_DOUBLE_EQ(parsed.report.points[0].samples_per_s(), 32.0);  // 16 x 4 / 2 s
  EXPECT_DOUBLE_EQ(parsed.report.points[1].cpu_us_per_sample(), 1.5e6 / 64);
  EXPECT_EQ(parsed.report.notes, std::vector<std::string>{"dali: not importable"});
  EXPECT_EQ(parsed.report.loader["torch"], "2.15.0");
}

TEST(DataLoaderReport, AnyLineThatIsNotWhatItShouldBeIsNamedAndThePointsBeforeItKept) {
  const auto error_for = [](const std::string& bad) {
    const ParsedReport parsed = parse_loader_report(loader_line + "\n" + point_line("pil", 1, 4, 2.0) + "\n" + bad + "\n");
    EXPECT_EQ(parsed.report.points.size(), 1u) << bad;
    return parsed.error;
  };
  EXPECT_EQ(error_for("Traceback (most recent call last):").rfind("line 3 of the loader's report: ", 0), 0u);
  EXPECT_NE(error_for("Traceback (most recent call last):").find("Traceback"), std::string::npos);
  EXPECT_NE(error_for(R"({"kind": "point", "decoder": "pil"})").find("no \"workers\""), std::string::npos);
  EXPECT_NE(error_for(R"({"kind": "point", "decoder": "pil", "workers": "2", "batch": 16, "batches": 1, "samples": 16, "seconds": 1, "cpu_seconds": 1})")
                .find("\"workers\" is string"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"kind": "surprise"})").find("unknown kind \"surprise\""), std::string::npos);
  EXPECT_NE(error_for(R"([1, 2])").find("not a JSON object"), std::string::npos);
  EXPECT_NE(error_for(point_line("pil", 1, 4, 0)).find("seconds must be > 0"), std::string::npos);
  const ParsedReport early = parse_loader_report(point_line("pil", 1, 4, 2.0) + "\n");
  EXPECT_NE(early.error.find("a point before the \"loader\" line"), std::string::npos) << early.error;
  const ParsedReport late = parse_loader_report(loader_line + "\n{\"kind\": \"done\"}\n" + point_line("pil", 1, 4, 2.0) + "\n");
  EXPECT_NE(late.error.find("a line after \"done\""), std::string::npos) << late.error;
}

TEST(DataLoaderReport, AMissingFrameworkIsReportedNotFailed) {
  const ParsedReport parsed =
      parse_loader_report(R"({"kind": "unavailable", "module": "torch", "why": "ModuleNotFoundError: No module named 'torch'"})" "\n");
  ASSERT_EQ(parsed.error, "");
  ASSERT_TRUE(parsed.report.unavailable.has_value());
  EXPECT_EQ(*parsed.report.unavailable, "torch: ModuleNotFoundError: No module named 'torch'");
}

TEST(DataLoaderSweep, WorkerCountsAreCappedAtTheCpusAndTheCapIsSaid) {
  const WorkerPlan two = plan_workers({1, 2, 4, 8, 16}, 2);
  EXPECT_EQ(two.counts, (std::vector<int>{1, 2}));
  EXPECT_EQ(two.capped, "capped at the 2 CPUs this process may use: 4, 8, 16 worker(s) not run");
  const WorkerPlan all = plan_workers({4, 1, 2}, 64);
  EXPECT_EQ(all.counts, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(all.capped, "");
  EXPECT_EQ(plan_workers({8, 16}, 2).counts, std::vector<int>{8});  // none fits: the smallest still runs
}

TEST(DataLoaderSweep, AWorkerListOutside1To1024OrNotNumbersIsRefusedNamingTheEntry) {
  std::vector<int> counts;
  EXPECT_FALSE(parse_worker_list("1,2,4,8,16", counts));
  EXPECT_EQ(counts, (std::vector<int>{1, 2, 4, 8, 16}));
  for (const std::string bad : {"0", "1025", "2,x", "1,,2", "-1", "1.5", ""}) {
    const auto error = parse_worker_list(bad, counts);
    ASSERT_TRUE(error.has_value()) << bad;
    EXPECT_NE(error->find("1..1024"), std::string::npos) << *error;
  }
}

TEST(DataLoaderSweep, TheKneeIsTheFewestWorkersWithinTenPercentOfTheBest) {
  std::vector<LoaderPoint> points;
  for (const auto& [workers, seconds] : std::vector<std::pair<int, double>>{{1, 4.0}, {2, 2.0}, {4, 1.05}, {8, 1.0}})
    points.push_back({"pil", workers, 16, 4, 64, seconds, 1.0});
  EXPECT_EQ(knee_workers(points), 4);  // 60.95 samples/s >= 0.9 x 64
  EXPECT_EQ(knee_workers({}), 0);
}

std::string step_line(int step, double wait, double end) {
  return R"({"kind": "step", "step": )" + std::to_string(step) + R"(, "samples": 8, "data_wait_s": )" + std::to_string(wait) +
         R"(, "compute_s": 0.01, "comm_s": 0.0, "end_s": )" + std::to_string(end) + "}";
}

TEST(DataLoaderReport, TrainingStepsAreReadInOrderWithTheirCpuFigures) {
  const std::string cpu =
      R"({"kind": "train_cpu", "steps": 2, "samples": 16, "seconds": 0.5, "main_cpu_seconds": 0.1, "worker_cpu_seconds": 0.8, "workers": 2, "cpus": 2})";
  const ParsedReport parsed = parse_loader_report(loader_line + "\n" + step_line(0, 0.4, 0.41) + "\n" + step_line(1, 0.1, 0.52) +
                                                  "\n" + step_line(2, 0.1, 0.63) + "\n" + cpu + "\n{\"kind\": \"done\"}\n");
  ASSERT_EQ(parsed.error, "");
  ASSERT_EQ(parsed.report.steps.size(), 3u);
  EXPECT_DOUBLE_EQ(parsed.report.steps[2].end_s, 0.63);
  ASSERT_TRUE(parsed.report.train_cpu.has_value());
  // max(0.9 s over 2 CPUs, 0.8 s over 2 workers, 0.1 s main) = 0.45 s for 16 samples.
  EXPECT_NEAR(parsed.report.train_cpu->capacity_samples_per_s(), 16 / 0.45, 1e-9);

  const auto error_for = [&](const std::string& bad) {
    return parse_loader_report(loader_line + "\n" + step_line(0, 0.4, 0.41) + "\n" + bad + "\n").error;
  };
  EXPECT_NE(error_for(step_line(2, 0.1, 0.52)).find("step 2 where step 1 was due"), std::string::npos);
  EXPECT_NE(error_for(step_line(1, -0.1, 0.52)).find("stage times must be >= 0"), std::string::npos);
  EXPECT_NE(error_for(step_line(1, 0.9, 0.52)).find("fit before end_s"), std::string::npos);
  EXPECT_NE(parse_loader_report(step_line(0, 0.4, 0.41) + "\n").error.find("a step before the \"loader\" line"),
            std::string::npos);
  EXPECT_NE(parse_loader_report(loader_line + "\n" + cpu + "\n").error.find("CPU figures before any step"), std::string::npos);
  // The CPU line must cover exactly the steps after the first (here 1 step of 8 samples, not 2 of 16).
  const ParsedReport short_run =
      parse_loader_report(loader_line + "\n" + step_line(0, 0.4, 0.41) + "\n" + step_line(1, 0.1, 0.52) + "\n" + cpu + "\n");
  EXPECT_NE(short_run.error.find("CPU figures for 2 steps and 16 samples; the report has 1 steps after the first, with 8 samples"),
            std::string::npos)
      << short_run.error;
  EXPECT_FALSE(short_run.report.train_cpu.has_value());
}

TEST(DataLoaderReport, TheCapacityIsBoundByTheWorkersOrTheMainProcessWhenCpusAreSpare) {
  TrainCpu one_worker{.steps = 4, .samples = 100, .seconds = 2, .main_cpu_seconds = 0.2, .worker_cpu_seconds = 1.0,
                      .workers = 1, .cpus = 8};
  EXPECT_DOUBLE_EQ(one_worker.capacity_samples_per_s(), 100.0);  // one worker: 1 s of its CPU
  TrainCpu busy_main = one_worker;
  busy_main.workers = 4, busy_main.main_cpu_seconds = 0.5;
  EXPECT_DOUBLE_EQ(busy_main.capacity_samples_per_s(), 200.0);  // the main process's 0.5 s
  TrainCpu nothing = one_worker;
  nothing.samples = 0;
  EXPECT_EQ(nothing.capacity_samples_per_s(), 0.0);
}

}  // namespace
}  // namespace nodeaudit::dataloader
