// `promtool check metrics` (Prometheus's own linter) on the textfile: on the real CLI's output, on
// recorded results with the verdict and the expected-value grades, and on one metric of every figure
// the probe catalogue declares, GPU and MPI ones included. Any complaint fails; without promtool the
// tests SKIP (scripts/install-deps.sh installs Debian's `prometheus` package, which ships it).
#include <gtest/gtest.h>

#include "tests/support/expect_gate.hpp"
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "harness/core/probe_catalogue.hpp"
#include "harness/report/prometheus.hpp"
#include "harness/report/prometheus_names.hpp"
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
  // One metric of each figure the probe catalogue declares, with its unit, direction and every label
  // it may carry, so a GPU or MPI metric this CPU-only machine cannot measure is linted too.
  nlohmann::json doc{{"probes", nlohmann::json::array()}};
  std::set<std::string> families;
  for (const ProbeFigures& probe : probe_catalogue()) {
    nlohmann::json metrics = nlohmann::json::array();
    for (const FigureSpec& figure : probe.figures) {
      nlohmann::json labels = nlohmann::json::object();
      for (const std::string& label : figure.labels) labels[label] = "0";
      metrics.push_back({{"name", figure.name},
                         {"unit", figure.unit},
                         {"better", figure.better.value_or(Better::higher) == Better::higher ? "higher" : "lower"},
                         {"labels", labels},
                         {"n", 1},
                         {"median", 1.0},
                         {"ci95", {1.0, 1.0}}});
      families.insert(report::prometheus_series(probe.probe_id, figure.name, figure.unit).family);
    }
    if (!metrics.empty())
      doc["probes"].push_back({{"id", probe.probe_id}, {"status", "ok"}, {"duration_s", 1.0}, {"metrics", metrics}});
  }
  ASSERT_GT(families.size(), 60u) << "the catalogue links every probe folder's figures";
  const std::string text = render_prometheus(doc);
  for (const std::string& family : families)
    EXPECT_NE(text.find("\n# TYPE " + family + " "), std::string::npos) << family << " is not in the textfile";
  ASSERT_NE(text.find("nodeaudit_comm_host_fabric_pingpong_latency_seconds{ranks=\"0\",size=\"0\"} 1e-06"),
            std::string::npos)
      << text;
  expect_promtool_accepts(text, "the catalogue");
}
