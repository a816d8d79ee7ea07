// `promtool check metrics` (Prometheus's own linter) on the textfile: on the real CLI's output and
// on recorded results that carry every metric of the catalogue, GPU ones included, with the
// verdict and the expected-value grades. Any complaint fails; without promtool the tests SKIP
// (scripts/install-deps.sh installs Debian's `prometheus` package, which ships it).
#include <gtest/gtest.h>

#include "tests/support/expect_gate.hpp"
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "harness/report/prometheus.hpp"
#include "harness/score/score.hpp"
#include "tests/harness/report/fixture_util.hpp"
#include "tests/support/cli_process.hpp"

using namespace nodeaudit;
using namespace nodeaudit::test;
namespace fs = std::filesystem;

namespace {

const char* promtool_path() {
  const char* from_env = std::getenv("NODEAUDIT_PROMTOOL");
  return from_env ? from_env : "/usr/bin/promtool";
}

struct Lint {
  int exit_code = -1;
  std::string output;  // promtool's complaints, stdout and stderr together
};

Lint promtool_check(const std::string& path) {
  const proc::ProcessResult r = proc::run_process({promtool_path(), "check", "metrics"},
                                                  {.stderr_into_stdout = true, .stdin_path = path});
  return {r.exit_code, r.out};
}

void expect_promtool_accepts(const std::string& text, const std::string& what) {
  const std::string dir = proc::make_temp_dir("promtool");
  const std::string path = dir + "/nodeaudit.prom";
  std::ofstream(path) << text;
  const Lint lint = promtool_check(path);
  EXPECT_EQ(lint.exit_code, 0) << what << ": promtool check metrics said:\n" << lint.output;
  EXPECT_EQ(lint.output, "") << what;
  fs::remove_all(dir);
}

class Promtool : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(promtool_path()))
      SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_PROMTOOL",
                           std::string(promtool_path()) + " not found (Debian: apt-get install prometheus; or set NODEAUDIT_PROMTOOL)");
  }
};

}  // namespace

TEST_F(Promtool, AcceptsTheTextfileOfARealScoredRun) {
  const std::string dir = proc::make_temp_dir("promtool-run");
  const std::string prom = dir + "/nodeaudit.prom";
  const auto r = proc::run_process({NODEAUDIT_BINARY, "run", "--only", "host.memory-bandwidth", "--repetitions", "2",
                                    "--profile", std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml",
                                    "--out", dir + "/r.json", "--prometheus", prom});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;  // 1: a FAIL verdict, still written
  const std::string text = read_text(prom);
  ASSERT_NE(text.find("nodeaudit_host_memory_bandwidth_bytes_per_second{"), std::string::npos) << text;
  ASSERT_NE(text.find("nodeaudit_verdict{"), std::string::npos) << text;
  const Lint lint = promtool_check(prom);
  EXPECT_EQ(lint.exit_code, 0) << lint.output << "\n" << text;
  EXPECT_EQ(lint.output, "");
  fs::remove_all(dir);
}

TEST_F(Promtool, AcceptsEveryRecordedResultAndTheGrades) {
  // baseline.json: GPU, storage (latency percentiles) and all-reduce figures; the H100 fixture,
  // scored, adds the verdict, the rules and the expected-value grades.
  for (const char* name : {"baseline.json", "candidate-probe-crashed.json"})
    expect_promtool_accepts(render_prometheus(load_compare(name)), name);
  nlohmann::json doc = load_result_file(results_fixture("h100-graded.json"));
  doc["assessment"] =
      score::assess(score::load_profile(std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml"), doc, {});
  expect_promtool_accepts(render_prometheus(doc), "h100-graded.json scored");
}

TEST_F(Promtool, AcceptsEveryMetricOfTheCatalogue) {
  // One metric of each name and unit results/SCHEMA.md lists, so a GPU or MPI metric this CPU-only
  // machine cannot measure is linted too.
  const std::vector<std::array<const char*, 3>> catalogue{{"host.memory-bandwidth", "bandwidth", "GB/s"},
                                                          {"host.decode", "images_per_s", "images/s"},
                                                          {"host.decode", "images_per_s_per_core", "images/s"},
                                                          {"host.decode", "images_per_s_per_gpu", "images/s"},
                                                          {"host.dataloader", "samples_per_s", "samples/s"},
                                                          {"host.dataloader", "cpu_per_sample", "us"},
                                                          {"host.dataloader", "knee_workers", "count"},
                                                          {"host.dataloader", "samples_per_s_per_worker", "samples/s"},
                                                          {"storage.read", "bandwidth", "GB/s"},
                                                          {"storage.read", "iops", "IOPS"},
                                                          {"storage.read", "latency_p50", "us"},
                                                          {"storage.read", "latency_p99", "us"},
                                                          {"storage.read", "latency_max", "us"},
                                                          {"storage.read", "cpu_per_gb", "s/GB"},
                                                          {"storage.dataset", "samples_per_s", "samples/s"},
                                                          {"storage.dataset", "knee_workers", "count"},
                                                          {"storage.checkpoint", "write_bandwidth", "GB/s"},
                                                          {"storage.checkpoint", "stall_s", "s"},
                                                          {"storage.checkpoint", "restore_bandwidth", "GB/s"},
                                                          {"gpu.gemm", "tflops", "TFLOP/s"},
                                                          {"gpu.gemm", "pct_of_peak", "%"},
                                                          {"gpu.gemm", "spread_pct", "%"},
                                                          {"gpu.memory-bandwidth", "pct_of_peak", "%"},
                                                          {"gpu.memory-capacity", "usable_bytes", "bytes"},
                                                          {"gpu.memory-capacity", "largest_alloc_bytes", "bytes"},
                                                          {"gpu.memory-capacity", "total_bytes", "bytes"},
                                                          {"gpu.memory-integrity", "bytes_tested", "bytes"},
                                                          {"gpu.memory-integrity", "errors", "count"},
                                                          {"gpu.pcie", "h2d_bandwidth", "GB/s"},
                                                          {"gpu.pcie", "d2h_bandwidth", "GB/s"},
                                                          {"gpu.pcie", "h2d_pct_of_link", "%"},
                                                          {"gpu.pcie", "d2h_pct_of_link", "%"},
                                                          {"gpu.stress", "sustained_tflops", "TFLOP/s"},
                                                          {"gpu.stress", "drop_pct", "%"},
                                                          {"gpu.stress", "throttle_pct", "%"},
                                                          {"comm.allreduce", "busbw", "GB/s"},
                                                          {"comm.allreduce", "algbw", "GB/s"},
                                                          {"comm.allreduce", "time_us", "us"},
                                                          {"comm.allreduce", "busbw_peak", "GB/s"},
                                                          {"comm.allreduce", "size_at_90pct", "bytes"},
                                                          {"comm.allreduce", "latency_small", "us"},
                                                          {"comm.p2p", "bandwidth", "GB/s"},
                                                          {"comm.host-fabric", "allreduce_bw", "GB/s"},
                                                          {"comm.host-fabric", "pingpong_bw", "GB/s"},
                                                          {"comm.host-fabric", "pingpong_latency", "us"},
                                                          {"pipeline.step", "au", "%"},
                                                          {"pipeline.step", "au_with_checkpoint", "%"},
                                                          {"pipeline.step", "samples_per_s", "samples/s"},
                                                          {"pipeline.step", "step_time", "s"},
                                                          {"pipeline.step", "stage_busy_pct", "%"},
                                                          {"pipeline.step", "data_wait_s", "s"},
                                                          {"pipeline.step", "predicted_utilization", "%"},
                                                          {"pipeline.step", "host_to_device_bandwidth", "GB/s"},
                                                          {"pipeline.step", "loader_capacity", "samples/s"}};
  nlohmann::json doc{{"probes", nlohmann::json::array()}};
  for (const auto& [probe, metric, unit] : catalogue)
    doc["probes"].push_back({{"id", probe},
                             {"status", "ok"},
                             {"duration_s", 1.0},
                             {"metrics",
                              {{{"name", metric},
                                {"unit", unit},
                                {"better", "higher"},
                                {"labels", {{"gpu", "0"}}},
                                {"n", 1},
                                {"median", 1.0},
                                {"ci95", {1.0, 1.0}}}}}});
  const std::string text = render_prometheus(doc);
  ASSERT_NE(text.find("nodeaudit_comm_host_fabric_pingpong_latency_seconds{gpu=\"0\"} 1e-06"), std::string::npos)
      << text;
  expect_promtool_accepts(text, "the catalogue");
}
