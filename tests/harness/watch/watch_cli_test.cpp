// `nodeaudit watch` end to end: bad --duration/--interval/--pid exit 2 with one line naming the
// value and write nothing; a short watch writes a schema-valid result with the series and the
// diagnosis; Ctrl-C ends the watch, keeps the diagnosis of what was collected and exits 130.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "harness/core/result.hpp"
#include "tests/support/cli_process.hpp"

namespace fs = std::filesystem;
using namespace nodeaudit;
using nodeaudit::proc::files_in;
using nodeaudit::proc::Trigger;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::run_process;

namespace {

class WatchCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("watch"); }
  void TearDown() override { fs::remove_all(dir_); }

  void expect_usage_error(const std::vector<std::string>& args, const std::string& needle) {
    std::vector<std::string> argv{NODEAUDIT_BINARY, "watch", "--out", dir_};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run_process(argv);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("nodeaudit: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_TRUE(files_in(dir_).empty()) << "bad input writes nothing";
  }

  nlohmann::json only_result() {
    const auto files = files_in(dir_);
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? nlohmann::json() : load_result_file(files[0]);
  }

  std::string dir_;
};

int exited_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

}  // namespace

TEST_F(WatchCli, BadDurationAndIntervalExitTwo) {
  expect_usage_error({"--duration", "abc"}, "--duration abc");
  expect_usage_error({"--duration", "10"}, "has no unit");
  expect_usage_error({"--duration", "0s"}, "must be more than 0");
  expect_usage_error({"--interval", "10ms"}, "at least 100ms");
  expect_usage_error({"--duration", "5s", "--interval", "1m"}, "no longer than --duration");
  expect_usage_error({"--duration", "30d"}, "unknown unit 'd'");
}

TEST_F(WatchCli, BadPidExitsTwoNamingIt) {
  const std::string gone = std::to_string(exited_pid());
  expect_usage_error({"--pid", gone}, "--pid " + gone + ": no such process");
  expect_usage_error({"--pid", "12x"}, "--pid 12x: expected a process id");
  expect_usage_error({"--pid", "-3"}, "--pid -3");
  const auto r = run_process({NODEAUDIT_BINARY, "watch", "--pid", "1", "--all", "--out", dir_});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("excludes"), std::string::npos) << r.err;
}

TEST_F(WatchCli, ShortWatchWritesTheSeriesAndTheDiagnosis) {
  const auto r = run_process({NODEAUDIT_BINARY, "watch", "--duration", "2s", "--interval", "250ms", "--out", dir_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << "no live status line without a TTY";
  const nlohmann::json doc = only_result();
  ASSERT_EQ(doc["probes"].size(), 1u);
  const auto& p = doc["probes"][0];
  EXPECT_EQ(p["id"], "watch.telemetry");
  EXPECT_EQ(p["status"], "ok");
  EXPECT_EQ(p["info"]["ended_by"], "duration");
  EXPECT_GE(p["info"]["series"]["t_s"].size(), 6u);
  EXPECT_TRUE(p["info"]["series"]["columns"].contains("cpu_busy_pct"));
  EXPECT_TRUE(p["info"]["series"]["columns"].contains("cpu0.busy_pct"));
  EXPECT_FALSE(p["info"]["summary"].get<std::string>().empty());
  EXPECT_FALSE(doc["finished_at"].is_null());
  EXPECT_NE(r.out.find("result written to"), std::string::npos);
  if (!p["info"]["gpu_series"].get<bool>()) {
    bool said_so = false;
    for (const auto& f : p["findings"]) said_so = said_so || f["code"] == "watch.no_gpu";
    EXPECT_TRUE(said_so) << p["findings"].dump();
    EXPECT_NE(r.err.find("the host only"), std::string::npos) << r.err;
  }
}

TEST_F(WatchCli, FollowsAProcessUntilItExits) {
  // The followed process lives until watch says it started, then 1 s more, then is killed.
  const pid_t child = fork();
  if (child == 0) {
    sleep(120);
    _exit(0);
  }
  const auto r = run_process({NODEAUDIT_BINARY, "watch", "--duration", "1m", "--interval", "200ms", "--pid", std::to_string(child), "--out", dir_},
                             Trigger{.output_contains = "Ctrl-C stops early", .then_after_s = 1.0,
                                     .action = [child](pid_t) { kill(child, SIGKILL); }});
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(r.trigger_seen) << "watch never said it started\n" << r.out << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = only_result();
  const auto& p = doc["probes"][0];
  EXPECT_EQ(p["info"]["ended_by"], "process exited");
  EXPECT_EQ(p["params"]["pid"], child);
  EXPECT_TRUE(p["info"]["series"]["columns"].contains("proc.cpu_pct"));
  EXPECT_LT(p["duration_s"].get<double>(), 30);
}

TEST_F(WatchCli, InterruptKeepsTheDiagnosisAndExits130) {
  // Ctrl-C 1.5 s after watch says it started: about 7 samples at 200 ms, the test wants 3.
  const auto r = run_process({NODEAUDIT_BINARY, "watch", "--duration", "1h", "--interval", "200ms", "--out", dir_},
                             Trigger{.output_contains = "Ctrl-C stops early", .then_after_s = 1.5});
  ASSERT_TRUE(r.trigger_seen) << "watch never said it started\n" << r.out << r.err;
  EXPECT_EQ(r.exit_code, 130) << r.err;
  const nlohmann::json doc = only_result();
  const auto& p = doc["probes"][0];
  EXPECT_EQ(p["status"], "interrupted");
  EXPECT_NE(p["reason"].get<std::string>().find("the diagnosis covers"), std::string::npos);
  EXPECT_GE(p["info"]["samples"].get<int>(), 3);
  EXPECT_FALSE(p["findings"].empty());
  EXPECT_GT(p["metrics"].size(), 0u);
}
