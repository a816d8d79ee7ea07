// The runner's fault paths through `run`: a probe body that throws, a probe process that exits
// without writing its result, and a probe (with a helper process) that ignores Ctrl-C.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness/core/result.hpp"
#include "tests/support/cli_expect.hpp"

namespace fs = std::filesystem;
using namespace nodeaudit;
using nodeaudit::proc::files_in;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::probe_in;
using nodeaudit::proc::run_process;
using nodeaudit::proc::Trigger;

namespace {

class RunnerFaults : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("runner-faults"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

// A process is gone when it no longer exists or is a zombie waiting for a parent to reap it.
bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// SIGKILL takes effect a moment after kill() returns: wait for the state, with a bound that only
// a process that was never killed reaches.
bool becomes_gone(pid_t pid) {
  for (int i = 0; i < 6000 && !process_gone(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return process_gone(pid);
}

TEST_F(RunnerFaults, ThrowingBodyIsAFailureThatKeepsItsFigures) {
  const std::string out = dir_ + "/r.json";
  const auto r = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.throw,test.ok", "--out", out});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json doc = load_result_file(out);
  const auto thrown = probe_in(doc, "test.throw");
  EXPECT_EQ(thrown["status"], "failed");
  EXPECT_EQ(thrown["reason"], "unexpected error: thrown after the first figure");
  ASSERT_EQ(thrown["metrics"].size(), 1u) << "the figure recorded before the throw is kept";
  EXPECT_EQ(thrown["metrics"][0]["n"], 2);
  EXPECT_EQ(probe_in(doc, "test.ok")["status"], "ok");
}

TEST_F(RunnerFaults, ProcessExitingWithoutAResultIsACrash) {
  const std::string out = dir_ + "/r.json";
  const auto r = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.exit,test.ok", "--out", out});
  EXPECT_EQ(r.exit_code, 1) << "exit status 0 without a result is not a success\n" << r.err;
  const nlohmann::json doc = load_result_file(out);
  const auto exited = probe_in(doc, "test.exit");
  EXPECT_EQ(exited["status"], "crashed");
  EXPECT_EQ(exited["reason"], "crashed (exited with code 0 without a result)");
  EXPECT_TRUE(exited["metrics"].empty());
  EXPECT_EQ(probe_in(doc, "test.ok")["status"], "ok");
  EXPECT_EQ(files_in(dir_).size(), 1u) << "no temp file may be left behind";
}

TEST_F(RunnerFaults, ProbeIgnoringCtrlCIsKilledWithItsHelperAfterTheGrace) {
  const std::string out = dir_ + "/r.json";
  const std::string ready_dir = make_temp_dir("deaf");
  const std::string ready = ready_dir + "/pids";
  ::setenv("NODEAUDIT_TEST_DEAF_READY_FILE", ready.c_str(), 1);
  const auto r = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.deaf,test.ok", "--out", out}, Trigger{.file_exists = ready});
  ::unsetenv("NODEAUDIT_TEST_DEAF_READY_FILE");
  pid_t probe = 0, helper = 0;
  std::ifstream(ready) >> probe >> helper;
  fs::remove_all(ready_dir);
  ASSERT_TRUE(r.trigger_seen) << "test.deaf never said it ignores SIGINT\n" << r.err;
  ASSERT_GT(probe, 0);
  ASSERT_GT(helper, 0);
  EXPECT_EQ(r.exit_code, 130) << r.err;
  const nlohmann::json doc = load_result_file(out);
  const auto deaf = probe_in(doc, "test.deaf");
  EXPECT_EQ(deaf["status"], "interrupted");
  EXPECT_EQ(deaf["reason"], "interrupted by signal before any figure was saved");
  EXPECT_EQ(probe_in(doc, "test.ok")["reason"], "not started: the run was interrupted");
  EXPECT_TRUE(becomes_gone(probe)) << "the probe process " << probe << " outlived the run";
  EXPECT_TRUE(becomes_gone(helper)) << "the probe's helper process " << helper << " outlived the run";
  if (!process_gone(helper)) kill(helper, SIGKILL);
}

}  // namespace
