// How `learn` ends its job, however learn itself ends: every process of the job gone (torchrun's
// ranks in sessions of their own included), learn's folder and an empty result removed, the job
// ended SIGINT first so its own `finally` runs, the way it ended in the result; and nothing
// measured lost to a name clash, bytes that are not UTF-8, or FLOPs the counter cannot see.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/harness/learn/learn_test_util.hpp"

namespace nodeaudit::learn::test {
namespace {

namespace fs = std::filesystem;

class LearnLifecycle : public LearnCli {
 protected:
  // learn with TMPDIR in this test's folder, so its private folder can be looked for afterwards.
  proc::ProcessResult learn_here(const std::vector<std::string>& flags, const std::vector<std::string>& job_args,
                                 std::optional<proc::Trigger> trigger = std::nullopt,
                                 const std::vector<std::string>& launcher = {}) {
    fs::create_directories(tmp());
    std::vector<std::string> argv{NODEAUDIT_BINARY, "learn", "--out", result_path(), "--out-profile", profile_path()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--", "env", "OMP_NUM_THREADS=1"});
    if (launcher.empty()) argv.push_back(torch_python());
    argv.insert(argv.end(), launcher.begin(), launcher.end());
    argv.push_back(script("train_lifecycle.py"));
    argv.insert(argv.end(), {"--tag", dir_});
    argv.insert(argv.end(), job_args.begin(), job_args.end());
    proc::ChildSetup setup;
    setup.environment = {{"TMPDIR", tmp()}};
    return proc::run_process(argv, setup, std::move(trigger));
  }
  std::string tmp() const { return dir_ + "/tmp"; }
  std::string started() const { return dir_ + "/started"; }

  // The job's processes, waited for up to `within_s` (a killed learn's guardian works after it).
  bool job_processes_gone_within(double within_s) const {
    const auto start = std::chrono::steady_clock::now();
    while (!processes_in_folder().empty()) {
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > within_s) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return true;
  }
  std::vector<std::string> learn_folders_left() const {
    std::vector<std::string> left;
    for (const auto& path : proc::files_in(tmp()))
      if (fs::path(path).filename().string().rfind("nodeaudit-learn", 0) == 0) left.push_back(path);
    return left;
  }
  static proc::Trigger on_start(const std::string& file, std::function<void(pid_t)> action) {
    proc::Trigger t;
    t.file_exists = file;
    t.give_up_after_s = 60;
    t.action = std::move(action);
    return t;
  }
  nlohmann::json job_end() const { return learn_entry()["info"]["job_end"]; }
};

// torchrun starts each rank in a session of its own; these ranks treat SIGINT and SIGTERM as a
// flag only (a preemption-aware job), so only SIGKILL ends them: Ctrl-C of learn once rank 0 has
// taken a step, and every process is gone when learn returns.
TEST_F(LearnLifecycle, TorchrunRanksThatOnlyNoteSignalsEndWithLearn) {
  TORCH_OR_SKIP();
  const std::string torchrun = fs::path(torch_python()).parent_path() / "torchrun";
  const auto r = learn_here({"--warmup", "0", "--steps", "1000", "--grace", "1s"},
                            {"--ignore-stop", "--step-sleep", "0.2", "--started-file", started()},
                            on_start(started(), [](pid_t learn) { kill(learn, SIGINT); }),
                            {torchrun, "--standalone", "--nproc_per_node", "2"});
  ASSERT_TRUE(r.trigger_seen) << r.err;
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_TRUE(processes_in_folder().empty()) << "torchrun and both ranks are gone when learn returns";
  EXPECT_EQ(job_end()["signals"], nlohmann::json::array({"SIGINT", "SIGTERM", "SIGKILL"})) << job_end().dump();
  EXPECT_EQ(learn_entry()["status"], "interrupted");
  EXPECT_NE(r.err.find("SIGTERM after 1 s"), std::string::npos) << r.err;
  EXPECT_TRUE(learn_folders_left().empty());
}

// kill -9 of learn: its guardian ends the job (and a helper it started in a session of its own),
// removes learn's folder and the result that holds nothing measured.
TEST_F(LearnLifecycle, KillNineOfLearnEndsTheJobAndRemovesWhatLearnMade) {
  TORCH_OR_SKIP();
  const auto r = learn_here({"--steps", "1000", "--grace", "2s"},
                            {"--escaped-child", "--step-sleep", "0.2", "--started-file", started()},
                            on_start(started(), [](pid_t learn) { kill(learn, SIGKILL); }));
  ASSERT_TRUE(r.trigger_seen) << r.err;
  EXPECT_TRUE(job_processes_gone_within(15)) << "the job and its escaped helper are ended by the guardian";
  const auto start = std::chrono::steady_clock::now();
  while (!learn_folders_left().empty() && std::chrono::steady_clock::now() - start < std::chrono::seconds(5))
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(learn_folders_left().empty());
  EXPECT_FALSE(fs::exists(result_path())) << "the claimed result held nothing measured";
}

// A hang-up (the ssh session dropped) ends learn as Ctrl-C does: the job gets SIGINT, the steps
// measured so far are kept, exit 130.
TEST_F(LearnLifecycle, HangUpEndsLearnAsCtrlC) {
  TORCH_OR_SKIP();
  const auto r = learn_here({"--steps", "1000", "--grace", "2s"},
                            {"--escaped-child", "--step-sleep", "0.2", "--started-file", started()},
                            on_start(started(), [](pid_t learn) { kill(learn, SIGHUP); }));
  ASSERT_TRUE(r.trigger_seen) << r.err;
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ(learn_entry()["status"], "interrupted");
  EXPECT_EQ(job_end()["signals"][0], "SIGINT") << job_end().dump();
  EXPECT_TRUE(processes_in_folder().empty()) << "the escaped helper too";
  EXPECT_TRUE(learn_folders_left().empty());
}

// Ctrl-C: the job gets SIGINT first, so its `finally` (2 s of writing) runs to its end.
TEST_F(LearnLifecycle, CtrlCLetsTheJobsFinallyRun) {
  TORCH_OR_SKIP();
  const std::string chunks = dir_ + "/chunks.txt";
  const auto r =
      learn_here({"--steps", "1000"},
                 {"--slow-finally", "4", "--chunks-file", chunks, "--step-sleep", "0.2", "--started-file", started()},
                 on_start(started(), [](pid_t learn) { kill(learn, SIGINT); }));
  ASSERT_TRUE(r.trigger_seen) << r.err;
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ(read_text(chunks), "chunk 0\nchunk 1\nchunk 2\nchunk 3\n");
  EXPECT_EQ(job_end()["signals"], nlohmann::json::array({"SIGINT"})) << job_end().dump();
  EXPECT_NE(job_end()["how"].get<std::string>().find("SIGINT"), std::string::npos);
}

// A job whose own end takes longer than --grace after its last step is stopped, and is not `ok`;
// its measured steps and its profile are kept.
TEST_F(LearnLifecycle, AJobStoppedAfterItsStepsIsNotOk) {
  TORCH_OR_SKIP();
  const auto r = learn_here({"--warmup", "0", "--steps", "2", "--grace", "1s"},
                            {"--ignore-stop", "--slow-finally", "40", "--chunks-file", dir_ + "/c.txt"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(learn_entry()["status"], "failed");
  EXPECT_NE(r.err.find("had not ended 1 s after its last step"), std::string::npos) << r.err;
  EXPECT_EQ(job_end()["signals"], nlohmann::json::array({"SIGINT", "SIGTERM", "SIGKILL"}));
  EXPECT_TRUE(fs::exists(profile_path()));
}

// Two learns at once in one results folder: each gets its own stem for result and profile.
TEST_F(LearnLifecycle, TwoLearnsAtOnceKeepBothRuns) {
  TORCH_OR_SKIP();
  const std::string out = dir_ + "/results/";
  fs::create_directories(out);
  auto one_learn = [&](proc::ProcessResult& r) {
    r = proc::run_process({NODEAUDIT_BINARY, "learn", "--warmup", "0", "--steps", "2", "--out", out, "--", "env",
                           "OMP_NUM_THREADS=1", torch_python(), script("train_lifecycle.py"), "--tag", dir_});
  };
  proc::ProcessResult a, b;
  std::thread first(one_learn, std::ref(a)), second(one_learn, std::ref(b));
  first.join();
  second.join();
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(b.exit_code, 0) << b.err;
  int results = 0;
  for (const auto& path : proc::files_in(out)) {
    if (fs::path(path).extension() != ".json") continue;
    ++results;
    EXPECT_TRUE(fs::exists(fs::path(path).replace_extension(".toml"))) << path << " has its profile beside it";
    EXPECT_EQ(nlohmann::json::parse(read_text(path))["probes"].size(), 1u) << path;
  }
  EXPECT_EQ(results, 2);
}

// Output and a script name that are not UTF-8 (Latin-1 "ü"): kept, each such byte written \xFC.
TEST_F(LearnLifecycle, BytesThatAreNotUtf8AreKeptEscaped) {
  TORCH_OR_SKIP();
  const std::string latin1_script = dir_ + "/m\xfcller.py";
  fs::copy_file(script("train_lifecycle.py"), latin1_script);
  const auto r = learn({"--warmup", "0", "--steps", "2"}, {latin1_script, "--tag", dir_, "--print-latin1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_text(result_path());
  EXPECT_NO_THROW((void)nlohmann::json::parse(text));
  EXPECT_NE(text.find("m\\\\xFCller.py"), std::string::npos) << "the script's name, its byte escaped";
  EXPECT_EQ(learn_entry()["status"], "ok");
}

// A model run in numpy: the FLOP counter sees nothing. The measured steps are kept, with the reason.
TEST_F(LearnLifecycle, AJobWithNoCountableFlopsKeepsItsResult) {
  TORCH_OR_SKIP();
  const auto r =
      learn({"--warmup", "0", "--steps", "2"}, {script("train_lifecycle.py"), "--tag", dir_, "--numpy-model"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json e = learn_entry();
  EXPECT_EQ(metric(e, "step_time")["n"], 2);
  EXPECT_TRUE(e["info"]["learned"]["flops_per_sample"]["value"].is_null());
  EXPECT_NE(e["info"]["learned"]["flops_per_sample"]["how"].get<std::string>().find("not measured"), std::string::npos);
  EXPECT_FALSE(fs::exists(profile_path()));
  EXPECT_NE(r.err.find("FLOP counter counted no FLOPs"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nodeaudit::learn::test
