// A hang-up (SIGHUP: the ssh session dropped) ends `run`, `probe` and `watch` as Ctrl-C does: the
// figures measured are kept and the exit code is 130. Every output place is checked before the
// first probe: a missing or non-directory parent, a symbolic link (dangling or not) is refused with
// one line and exit 2, and nothing is written through the link.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness/core/result.hpp"
#include "tests/support/cli_expect.hpp"

namespace fs = std::filesystem;
using namespace nodeaudit;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::run_process;
using nodeaudit::proc::Trigger;

namespace {

class HangUp : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("hangup"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

Trigger hang_up_when(const std::string& ready) {
  Trigger t;
  t.file_exists = ready;
  t.action = [](pid_t child) { kill(child, SIGHUP); };
  return t;
}

TEST_F(HangUp, RunKeepsItsFiguresAndExits130) {
  const std::string out = dir_ + "/r.json", ready = make_temp_dir("ready") + "/first-figure";
  ::setenv("NODEAUDIT_TEST_SLOW_READY_FILE", ready.c_str(), 1);
  const auto r = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.slow", "--out", out}, hang_up_when(ready));
  ::unsetenv("NODEAUDIT_TEST_SLOW_READY_FILE");
  fs::remove_all(fs::path(ready).parent_path());
  ASSERT_TRUE(r.trigger_seen) << r.err;
  EXPECT_EQ(r.exit_code, 130) << r.err;
  const nlohmann::json doc = load_result_file(out);
  EXPECT_EQ(doc["probes"][0]["status"], "interrupted");
  EXPECT_GE(doc["probes"][0]["metrics"].size(), 1u) << "figures measured before the hang-up are kept";
}

TEST_F(HangUp, ProbeExits130) {
  const std::string ready = make_temp_dir("ready") + "/first-figure";
  ::setenv("NODEAUDIT_TEST_SLOW_READY_FILE", ready.c_str(), 1);
  const auto r = run_process({NODEAUDIT_TESTBIN, "probe", "test.slow"}, hang_up_when(ready));
  ::unsetenv("NODEAUDIT_TEST_SLOW_READY_FILE");
  fs::remove_all(fs::path(ready).parent_path());
  ASSERT_TRUE(r.trigger_seen) << r.err;
  EXPECT_EQ(r.exit_code, 130) << r.err;
}

TEST_F(HangUp, WatchKeepsItsDiagnosisAndExits130) {
  Trigger t;
  t.output_contains = "Ctrl-C stops early";
  t.then_after_s = 1.0;
  t.action = [](pid_t child) { kill(child, SIGHUP); };
  const auto r = run_process({NODEAUDIT_BINARY, "watch", "--duration", "1h", "--interval", "200ms", "--out", dir_}, t);
  ASSERT_TRUE(r.trigger_seen) << r.out << r.err;
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ(proc::files_in(dir_).size(), 1u);
}

class OutputPlaces : public HangUp {
 protected:
  proc::ProcessResult run_with(const std::vector<std::string>& extra) {
    std::vector<std::string> argv{NODEAUDIT_BINARY, "run", "--only", "host.memory-bandwidth",
                                  "--repetitions",  "1",   "--out",  dir_ + "/r.json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_process(argv);
  }
  void expect_refused(const proc::ProcessResult& r, const std::string& words) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ + "/r.json")) << "refused before the first probe";
  }
};

TEST_F(OutputPlaces, TelemetryOutInAMissingDirectory) {
  expect_refused(run_with({"--telemetry-out", dir_ + "/missing/x.csv"}), "does not exist");
}

TEST_F(OutputPlaces, TelemetryOutOnADanglingLinkIsNotWrittenThrough) {
  fs::create_symlink(dir_ + "/target.csv", dir_ + "/link.csv");
  expect_refused(run_with({"--telemetry-out", dir_ + "/link.csv"}), "symbolic link");
  EXPECT_FALSE(fs::exists(dir_ + "/target.csv"));
}

TEST_F(OutputPlaces, PrometheusOnALinkIsNotReplaced) {
  std::ofstream(dir_ + "/mine.prom") << "# the user's own\n";
  fs::create_symlink(dir_ + "/mine.prom", dir_ + "/link.prom");
  expect_refused(run_with({"--prometheus", dir_ + "/link.prom"}), "symbolic link");
  EXPECT_TRUE(fs::is_symlink(dir_ + "/link.prom"));
}

TEST_F(OutputPlaces, AFileWhereADirectoryIsExpectedIsNamedSo) {
  std::ofstream(dir_ + "/AFILE") << "x";
  const auto r = run_process({NODEAUDIT_BINARY, "report", "--md", dir_ + "/AFILE/x.md",
                              std::string(NODEAUDIT_FIXTURES) + "/results/balanced.json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is a file, not a directory"), std::string::npos) << r.err;
}

}  // namespace
