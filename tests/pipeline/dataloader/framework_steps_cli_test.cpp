// pipeline.step --loader pytorch end to end: the real binary, real sample files, a real PyTorch
// DataLoader in the torch venv running the steps with emulated compute; a stand-in script
// (NODEAUDIT_LOADER_SCRIPT) for a report that turns to garbage mid-run; a Python without torch;
// and the bad input this mode adds.
#include <fstream>

#include "tests/io/io_test_util.hpp"
#include "tests/pipeline/dataloader/torch_test_util.hpp"

namespace nodeaudit::io {
namespace {

using test::CliResult;
using test::expect_one_line_exit_two;
using test::probe_entry;
using test::run_cli;
using test::TempDir;
using test::torch_python;

const nlohmann::json* find_metric(const nlohmann::json& entry, const std::string& name, const std::string& stage = "") {
  for (const auto& m : entry["metrics"])
    if (m["name"] == name && m["labels"].value("stage", "") == stage) return &m;
  return nullptr;
}

double first(const nlohmann::json* m) { return (*m)["samples"][0].get<double>(); }

void expect_framework_run(const nlohmann::json& e, const std::string& decoder) {
  ASSERT_EQ(e["status"], "ok") << e.dump(1);
  EXPECT_EQ(e["info"]["loader"].get<std::string>().rfind("pytorch", 0), 0u) << e["info"].dump();
  EXPECT_EQ(e["info"]["framework_loader"]["decoder"], decoder);
  EXPECT_EQ(e["info"]["checkpoints"]["mode"], "off (--loader pytorch saves none)");
  EXPECT_EQ(e["info"]["timed"]["steps"], 4);
  const auto* au = find_metric(e, "au");
  ASSERT_TRUE(au) << e["metrics"].dump();
  const auto* steps = find_metric(e, "step_time");
  ASSERT_TRUE(steps);
  EXPECT_EQ((*steps)["samples"].size(), 4u);
  // AU from the run's own times: the 4 timed steps' compute over their wall time (the sum of the
  // step times; this mode saves no checkpoint, so none is taken off), and that compute at least the
  // configured compute time of 4 steps, so AU is at least the configured share of the measured steps.
  const nlohmann::json& timed = e["info"]["timed"];
  double steps_wall_s = 0;
  for (const auto& t : (*steps)["samples"]) steps_wall_s += t.get<double>();
  EXPECT_NEAR(timed["wall_s"].get<double>(), steps_wall_s, 1e-9 * steps_wall_s + 1e-12);
  EXPECT_EQ(timed["checkpoint_s"].get<double>(), 0.0);
  const double configured_compute_s = 4 * e["info"]["compute_time_per_step_s"].get<double>();
  ASSERT_GT(configured_compute_s, 0) << e["info"].dump();
  EXPECT_GE(timed["compute_s"].get<double>(), configured_compute_s * (1 - 1e-6)) << "emulated compute never ends early";
  EXPECT_NEAR(first(au), 100 * timed["compute_s"].get<double>() / steps_wall_s, 1e-6);
  EXPECT_GE(first(au), 100 * configured_compute_s / steps_wall_s * (1 - 1e-6));
  EXPECT_LE(first(au), 100 * (1 + 1e-9));
  const auto* capacity = find_metric(e, "loader_capacity");
  ASSERT_TRUE(capacity) << e["metrics"].dump();
  EXPECT_GT(first(capacity), 0);
  EXPECT_TRUE(find_metric(e, "predicted_utilization")) << e.dump(1);
  EXPECT_EQ(e["info"]["prediction_inputs"]["loader_read_samples_per_s_per_gpu"].get<double>(), first(capacity));
  // The DataLoader does not split reading from decoding: no such figures rather than zeros.
  EXPECT_FALSE(find_metric(e, "stage_busy_pct", "loader_read"));
  EXPECT_TRUE(find_metric(e, "stage_busy_pct", "data_wait"));
}

TEST(PipelineFrameworkLoader, RealDataLoaderRunsTheStepsOnJpegsAndOnRawFiles) {
  TORCH_OR_SKIP();
  TempDir dir;
  // One round: the checks below count the steps of one run.
  const std::string base = "probe pipeline.step --format json --rounds 1 --loader pytorch --python " + torch_python() +
                           " --emulate-compute h100 --steps 5 --workers 1 --batch-size 8 --samples 64 --data-dir " + dir.path;
  const CliResult jpeg = run_cli(base + " --workload cv-resnet50-imagenet");
  ASSERT_EQ(jpeg.exit_code, 0) << jpeg.out;
  expect_framework_run(probe_entry(jpeg), "pil");
  const CliResult raw = run_cli(base + " --workload cv-resnet50-imagenet --decode none --sample-size 8KiB");
  ASSERT_EQ(raw.exit_code, 0) << raw.out;
  expect_framework_run(probe_entry(raw), "raw");
  EXPECT_EQ(dir.entries(), 0u) << "the generated samples are removed";
}

TEST(PipelineFrameworkLoader, APythonWithoutTorchIsSkippedBeforeAnySampleIsMade) {
  TempDir dir, data;
  const std::string venv = dir.path + "/bare";
  ASSERT_EQ(std::system(("python3 -m venv --without-pip " + venv).c_str()), 0);
  const CliResult r = run_cli("probe pipeline.step --format json --loader pytorch --steps 3 --samples 16 --python " + venv +
                              "/bin/python --data-dir " + data.path);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json e = probe_entry(r);
  EXPECT_EQ(e["status"], "skipped") << e.dump(1);
  EXPECT_NE(e.value("reason", "").find(venv + "/bin/python cannot import the framework (torch: "), std::string::npos) << e.dump(1);
  EXPECT_EQ(data.entries(), 0u);
}

// A stand-in that passes the preflight, reports three good steps, then prints garbage: the probe
// fails naming the line, and the steps before it still give their figures.
TEST(PipelineFrameworkLoader, AGarbageStepLineFailsNamingItAndKeepsTheStepsBefore) {
  TempDir dir, data;
  const std::string script = dir.path + "/garbage_steps.py";
  std::ofstream(script) << "import sys\nout = open(sys.argv[sys.argv.index('--out') + 1], 'w')\n"
                        << "out.write('{\"kind\": \"loader\", \"python\": \"3\", \"torch\": \"x\"}\\n')\n"
                        << "if '--check' in sys.argv:\n    sys.exit(0)\n"
                        << "for i in range(3):\n"
                        << "    out.write('{\"kind\": \"step\", \"step\": %d, \"samples\": 4, \"data_wait_s\": 0.01, "
                           "\"compute_s\": 0.02, \"comm_s\": 0.0, \"end_s\": %f}\\n' % (i, 0.03 * (i + 1)))\n"
                        << "out.write('Traceback (most recent call last):\\n')\n";
  const CliResult r = run_cli("probe pipeline.step --format json --loader pytorch --python python3 --emulate-compute h100 "
                              "--steps 5 --batch-size 4 --samples 16 --decode none --sample-size 4KiB --data-dir " + data.path,
                              {.environment = {{"NODEAUDIT_LOADER_SCRIPT", script}}});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const nlohmann::json e = probe_entry(r);
  EXPECT_EQ(e["status"], "failed") << e.dump(1);
  EXPECT_NE(e.value("reason", "").find("line 5 of the loader's report"), std::string::npos) << e.dump(1);
  EXPECT_NE(e.value("reason", "").find("Traceback"), std::string::npos) << e.dump(1);
  const auto* au = find_metric(e, "au");
  ASSERT_TRUE(au) << "the steps before the bad line are kept: " << e["metrics"].dump();
  EXPECT_NEAR(first(au), 100.0 * 0.04 / 0.06, 1e-6);  // two timed steps: 0.04 s compute in 0.06 s
  EXPECT_EQ(data.entries(), 0u);
}

TEST(PipelineFrameworkLoader, BadInputForTheFrameworkLoaderIsOneLineExitTwoAndLeavesNothing) {
  TempDir data;
  const std::string base = "probe pipeline.step --format json --loader pytorch --data-dir " + data.path;
  expect_one_line_exit_two(run_cli(base + " --python /nonexistent/python3"), "--python /nonexistent/python3: no such file");
  expect_one_line_exit_two(run_cli(base + " --direct true"), "--direct true reads with O_DIRECT, which only the native loader does");
  expect_one_line_exit_two(run_cli("probe pipeline.step --loader tensorflow --data-dir " + data.path), "tensorflow");
  EXPECT_EQ(data.entries(), 0u);
}

}  // namespace
}  // namespace nodeaudit::io
