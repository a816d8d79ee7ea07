// `run --rounds N` and `probe --rounds N` end to end, and a real disturbance: CPU-burning processes
// started by the test while host.decode runs mark the probe `disturbed` with the evidence.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "harness/core/result.hpp"
#include "tests/support/cli_expect.hpp"

namespace fs = std::filesystem;
using namespace nodeaudit;
using nodeaudit::proc::expect_one_line_usage_error;
using nodeaudit::proc::files_in;
using nodeaudit::proc::json_output;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::probe_in;
using nodeaudit::proc::run_process;

namespace {

class RoundsCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("rounds"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

// One spinning process per online CPU, so the load is a large share of any machine; killed on scope exit.
class CpuHogs {
 public:
  CpuHogs() {
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    for (long i = 0; i < cpus; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        volatile unsigned long spin = 0;
        while (true) spin = spin + 1;
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~CpuHogs() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  }
  CpuHogs(const CpuHogs&) = delete;
  CpuHogs& operator=(const CpuHogs&) = delete;
  std::size_t count() const { return pids_.size(); }

 private:
  std::vector<pid_t> pids_;
};

}  // namespace

TEST_F(RoundsCli, RunWithThreeRoundsWritesEachRoundsMedianBesideThePooledFigures) {
  const auto r = run_process({NODEAUDIT_BINARY, "run", "--only", "host.memory-bandwidth", "--rounds", "3",
                              "--repetitions", "3", "--out", dir_});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("[round 3/3] [1/1] host.memory-bandwidth ..."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" rounds "), std::string::npos) << "each figure shows its rounds' range: " << r.out;
  EXPECT_NE(r.out.find("measured in 3 interleaved rounds, each 1/3 of the level's work"), std::string::npos) << r.out;
  const auto files = files_in(dir_);
  ASSERT_EQ(files.size(), 1u);
  const nlohmann::json doc = load_result_file(files[0]);
  const nlohmann::json probe = probe_in(doc, "host.memory-bandwidth");
  EXPECT_EQ(probe["status"], "ok");
  EXPECT_EQ(probe["rounds"], 3);
  ASSERT_EQ(probe["metrics"].size(), 5u);  // copy, scale, add, triad, memcpy
  for (const auto& m : probe["metrics"]) {
    ASSERT_EQ(m["round_medians"].size(), 3u) << m.dump();
    EXPECT_EQ(m["n"], 3) << "the quick level splits --repetitions 3 over its three rounds: one each, pooled";
    for (const auto& median : m["round_medians"]) EXPECT_GT(median.get<double>(), 0);
  }
  EXPECT_DOUBLE_EQ(probe["round_work_share"].get<double>(), 1.0 / 3);
  EXPECT_TRUE(probe.contains("disturbance"));
}

TEST_F(RoundsCli, StandardLevelRoundsEachTakeTheWholeRepetitionCount) {
  const auto r = run_process({NODEAUDIT_BINARY, "probe", "host.memory-bandwidth", "--array-size", "32MiB", "--level", "standard",
                              "--rounds", "2", "--repetitions", "2", "--out", dir_});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto files = files_in(dir_);
  ASSERT_EQ(files.size(), 1u);
  const nlohmann::json probe = probe_in(load_result_file(files[0]), "host.memory-bandwidth");
  EXPECT_EQ(probe["rounds"], 2);
  EXPECT_FALSE(probe.contains("round_work_share")) << "each round measured the level's whole work";
  EXPECT_NE(r.out.find("measured in 2 interleaved rounds, each the level's whole work"), std::string::npos) << r.out;
  for (const auto& m : probe["metrics"]) EXPECT_EQ(m["n"], 4) << "two rounds of two repetitions: " << m.dump();
}

TEST_F(RoundsCli, QuickLevelSplitsItsBudgetIntoTwoRoundsByDefault) {
  const auto r = run_process({NODEAUDIT_BINARY, "run", "--only", "host.memory-bandwidth", "--out", dir_});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto files = files_in(dir_);
  ASSERT_EQ(files.size(), 1u);
  const nlohmann::json probe = probe_in(load_result_file(files[0]), "host.memory-bandwidth");
  EXPECT_EQ(probe["rounds"], 2);
  EXPECT_EQ(probe["round_work_share"], 0.5);
  for (const auto& m : probe["metrics"]) {
    ASSERT_EQ(m["round_medians"].size(), 2u) << m.dump();
    // Each round takes half the quick budget and its share of the level's 5 timed repetitions
    // (3 + 2); a round goes on past its share only while its half of the budget lasts.
    EXPECT_GE(m["n"].get<int>(), 5) << m.dump();
  }
}

TEST_F(RoundsCli, ProbeWithRoundsRecordsThemToo) {
  const auto r = run_process(
      {NODEAUDIT_BINARY, "probe", "host.memory-bandwidth", "--rounds", "2", "--repetitions", "2", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = json_output(r);
  const nlohmann::json probe = probe_in(doc, "host.memory-bandwidth");
  EXPECT_EQ(probe["rounds"], 2);
  for (const auto& m : probe["metrics"]) {
    EXPECT_EQ(m["round_medians"].size(), 2u);
    EXPECT_EQ(m["n"], 2) << "--repetitions 2 split over the quick level's two rounds";
  }
}

TEST_F(RoundsCli, BadRoundsExitTwoAndWriteNothing) {
  for (const char* bad : {"0", "x", "101", "2.5"}) {
    expect_one_line_usage_error(
        run_process({NODEAUDIT_BINARY, "run", "--only", "host.memory-bandwidth", "--rounds", bad, "--out", dir_}),
        std::string("--rounds ") + bad + ": must be a whole number from 1 to 100");
    EXPECT_TRUE(files_in(dir_).empty());
  }
}

TEST_F(RoundsCli, CpuBurningProcessesDuringHostDecodeMarkItDisturbed) {
  CpuHogs hogs;
  ASSERT_GT(hogs.count(), 0u);
  // One round: a round shorter than a second is not judged (/proc/stat's ticks are too coarse).
  const auto r = run_process(
      {NODEAUDIT_BINARY, "run", "--only", "host.decode", "--rounds", "1", "--repetitions", "2", "--out", dir_});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto files = files_in(dir_);
  ASSERT_EQ(files.size(), 1u);
  const nlohmann::json probe = probe_in(load_result_file(files[0]), "host.decode");
  ASSERT_EQ(probe["status"], "ok") << probe["reason"];
  EXPECT_TRUE(probe["disturbed"].get<bool>()) << probe["disturbance"].dump();
  EXPECT_GT(probe["disturbance"]["cpu_foreign_share_pct"].get<double>(), 5.0);
  EXPECT_NE(probe["disturbance"]["evidence"].get<std::string>().find("other processes used"), std::string::npos);
  EXPECT_NE(r.out.find("warning: host.decode was disturbed: other processes used"), std::string::npos) << r.out;
}
