// The CLI end to end: real processes, real files. Bad input exits 2 with one line and writes
// nothing; crashing and hanging probes do not kill the run; Ctrl-C keeps the figures measured.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/core/result.hpp"
#include "tests/support/cli_expect.hpp"

namespace fs = std::filesystem;
using namespace nodeaudit;
using nodeaudit::proc::files_in;
using nodeaudit::proc::Trigger;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::run_process;

namespace {

class Cli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("cli"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

const nlohmann::json* find_probe(const nlohmann::json& doc, const std::string& id) {
  for (const auto& p : doc["probes"])
    if (p["id"] == id) return &p;
  return nullptr;
}


}  // namespace

TEST_F(Cli, ListShowsEveryProbeWithItsBuildState) {
  const auto r = run_process({NODEAUDIT_BINARY, "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The host probe's own line says "built" in the build-state column ("not built (...)" must not pass).
  std::istringstream lines(r.out);
  std::string line, id, state;
  while (std::getline(lines, line) && line.rfind("host.memory-bandwidth ", 0) != 0) {
  }
  std::istringstream(line) >> id >> state;
  EXPECT_EQ(id, "host.memory-bandwidth") << r.out;
  EXPECT_EQ(state, "built") << line;
  EXPECT_EQ(r.out.find("test."), std::string::npos) << "test-only probes are not listed";
  // Every GPU probe says it has not been validated on a GPU; a host or storage probe does not.
  std::istringstream again(r.out);
  int gpu_lines = 0;
  while (std::getline(again, line)) {
    const bool marked = line.find("[not yet validated on real hardware]") != std::string::npos;
    if (line.rfind("gpu.", 0) == 0) {
      EXPECT_TRUE(marked) << line;
    }
    if (line.rfind("host.", 0) == 0 || line.rfind("storage.", 0) == 0) {
      EXPECT_FALSE(marked) << line;
    }
    gpu_lines += line.rfind("gpu.", 0) == 0 ? 1 : 0;
  }
  EXPECT_GT(gpu_lines, 0) << r.out;
}

TEST_F(Cli, EnvPrintsTheHostPart) {
  const auto r = run_process({NODEAUDIT_BINARY, "env", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto env = nlohmann::json::parse(r.out);
  EXPECT_GT(env["host"]["threads"].get<int>(), 0);
  EXPECT_GT(env["host"]["ram_total_bytes"].get<double>(), 0);
  EXPECT_TRUE(env["gpu_status"].is_string());
}

TEST_F(Cli, RunWritesASchemaValidResult) {
  const auto r = run_process({NODEAUDIT_BINARY, "run", "--only", "host.memory-bandwidth", "--repetitions", "3", "--out", dir_});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto files = files_in(dir_);
  ASSERT_EQ(files.size(), 1u);
  const nlohmann::json doc = load_result_file(files[0]);  // throws when it does not validate
  const auto* probe = find_probe(doc, "host.memory-bandwidth");
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ((*probe)["status"], "ok");
  ASSERT_EQ((*probe)["metrics"].size(), 5u);  // copy, scale, add, triad, memcpy
  for (const auto& m : (*probe)["metrics"]) {
    EXPECT_EQ(m["unit"], "GB/s");
    // At the quick level --repetitions is the total over its two rounds (2 + 1).
    EXPECT_EQ(m["n"], 3) << m.dump();
    EXPECT_EQ(m["round_medians"].size(), 2u) << m.dump();
    EXPECT_GT(m["median"].get<double>(), 0);
  }
  EXPECT_TRUE((*probe)["telemetry"].contains("host"));
  EXPECT_FALSE(doc["finished_at"].is_null());
  EXPECT_NE(r.out.find("bandwidth [kernel=triad]"), std::string::npos) << r.out;
}

TEST_F(Cli, BadInputExitsTwoAndWritesNothing) {
  const std::string bin = NODEAUDIT_BINARY;
  expect_one_line_usage_error(run_process({bin, "probe", "gpu.nothing"}), "unknown probe id");
  expect_one_line_usage_error(run_process({bin, "bogus"}), "'bogus' is not a command; the commands are run, probe,");
  expect_one_line_usage_error(run_process({bin, "run", "--only", "nothing.here", "--out", dir_}), "matches no probe");
  expect_one_line_usage_error(run_process({bin, "run", "--bogus"}), "--bogus");
  expect_one_line_usage_error(run_process({bin, "run", "--repetitions", "0", "--out", dir_}), "--repetitions 0");
  expect_one_line_usage_error(run_process({bin, "run", "--out", "/nonexistent/dir/x.json"}), "/nonexistent/dir");
  expect_one_line_usage_error(run_process({bin, "run", "--level", "fast", "--out", dir_}), "quick, standard or soak");
  expect_one_line_usage_error(run_process({bin, "run", "--gpus", "9", "--out", dir_}), "GPU 9 does not exist");
  expect_one_line_usage_error(run_process({bin, "probe", "host.memory-bandwidth", "--array-size", "12XB", "--out", dir_}),
                              "--array-size 12XB");
  EXPECT_TRUE(files_in(dir_).empty()) << "a bad invocation left a file behind";
}

TEST_F(Cli, ExistingResultFileIsNeverOverwritten) {
  const std::string file = dir_ + "/mine.json";
  std::ofstream(file) << "keep me";
  expect_one_line_usage_error(run_process({NODEAUDIT_BINARY, "run", "--out", file}), "never overwrites");
  std::ifstream in(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "keep me");
}

TEST_F(Cli, CrashingAndHangingProbesDoNotKillTheRun) {
  const std::string out = dir_ + "/r.json";
  const auto r = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.crash,test.hang,test.fail,test.ok", "--out", out});
  EXPECT_EQ(r.exit_code, 1) << "a crashed, timed-out or failed probe makes the run exit 1\n" << r.err;
  const nlohmann::json doc = load_result_file(out);
  ASSERT_EQ(doc["probes"].size(), 4u);
  EXPECT_EQ((*find_probe(doc, "test.crash"))["status"], "crashed");
  EXPECT_NE((*find_probe(doc, "test.crash"))["reason"].get<std::string>().find("signal 11"), std::string::npos);
  EXPECT_EQ((*find_probe(doc, "test.hang"))["status"], "timeout");
  EXPECT_EQ((*find_probe(doc, "test.fail"))["status"], "failed");
  EXPECT_EQ((*find_probe(doc, "test.fail"))["reason"], "asked to fail");
  const auto& ok = *find_probe(doc, "test.ok");
  EXPECT_EQ(ok["status"], "ok");
  ASSERT_EQ(ok["metrics"].size(), 1u);
  // 1e6 operations per repetition of at least 10 ms: never more than 1e8 per second.
  EXPECT_LE(ok["metrics"][0]["max"].get<double>(), 1e8);
  EXPECT_GT(ok["metrics"][0]["min"].get<double>(), 0);
}

TEST_F(Cli, InterruptKeepsPartialResultsAndExits130) {
  const std::string out = dir_ + "/r.json";
  // test.slow runs until interrupted; Ctrl-C goes once it says its first figure is recorded. The
  // ready file lives outside dir_, which must end up holding the result alone.
  const std::string ready_dir = make_temp_dir("ready");
  const std::string ready = ready_dir + "/first-figure";
  ::setenv("NODEAUDIT_TEST_SLOW_READY_FILE", ready.c_str(), 1);
  const auto r = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.slow,test.ok", "--out", out},
                             Trigger{.file_exists = ready});
  ::unsetenv("NODEAUDIT_TEST_SLOW_READY_FILE");
  std::filesystem::remove_all(ready_dir);
  ASSERT_TRUE(r.trigger_seen) << "test.slow never recorded a figure\n" << r.err;
  EXPECT_EQ(r.exit_code, 130) << r.err;
  const nlohmann::json doc = load_result_file(out);
  const auto& slow = *find_probe(doc, "test.slow");
  EXPECT_EQ(slow["status"], "interrupted");
  EXPECT_GE(slow["metrics"].size(), 1u) << "figures measured before Ctrl-C must be kept";
  EXPECT_EQ((*find_probe(doc, "test.ok"))["status"], "interrupted");
  EXPECT_EQ((*find_probe(doc, "test.ok"))["reason"], "not started: the run was interrupted");
  EXPECT_EQ(files_in(dir_).size(), 1u) << "no temp file may be left behind";
}

TEST_F(Cli, PrometheusTextfileCarriesEveryMetric) {
  const std::string prom = dir_ + "/nodeaudit.prom";
  const auto r = run_process({NODEAUDIT_BINARY, "run", "--only", "host.memory-bandwidth", "--repetitions", "2",
                              "--out", dir_ + "/r.json", "--prometheus", prom});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(prom);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  EXPECT_NE(text.find("# TYPE nodeaudit_host_memory_bandwidth_bytes_per_second gauge"), std::string::npos) << text;
  EXPECT_NE(text.find("nodeaudit_host_memory_bandwidth_bytes_per_second{kernel=\"triad\"} "), std::string::npos)
      << text;
  // A second run replaces our own textfile; a file that is not ours is refused before measuring.
  const std::string theirs = dir_ + "/theirs.prom";
  std::ofstream(theirs) << "node_foo 1\n";
  expect_one_line_usage_error(run_process({NODEAUDIT_BINARY, "run", "--out", dir_ + "/r2.json", "--prometheus", theirs}),
                              "never overwritten");
  std::ifstream again(theirs);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(again), {}), "node_foo 1\n");
}
