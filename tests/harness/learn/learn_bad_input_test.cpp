// `nodeaudit learn` on bad input and on jobs that go wrong: one line and exit 2 for what cannot be
// learned from at all (no command, --steps 0, a command not found or failing before its first step,
// a Python without torch, an --out-profile that exists); exit 1 with the steps measured kept and no
// profile for a job that dies or hangs mid-run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/harness/learn/learn_test_util.hpp"

namespace nodeaudit::learn::test {
namespace {

namespace fs = std::filesystem;

std::string last_line(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && trimmed.back() == '\n') trimmed.pop_back();
  const auto nl = trimmed.rfind('\n');
  return nl == std::string::npos ? trimmed : trimmed.substr(nl + 1);
}

class LearnBadInput : public LearnCli {
 protected:
  proc::ProcessResult learn_raw(const std::vector<std::string>& args) {
    std::vector<std::string> argv{NODEAUDIT_BINARY, "learn", "--out", result_path(), "--out-profile", profile_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return proc::run_process(argv);
  }
  void expect_nothing_written() {
    EXPECT_FALSE(fs::exists(result_path()));
    EXPECT_FALSE(fs::exists(profile_path()));
  }
};

TEST_F(LearnBadInput, NoCommandAfterTheSeparator) {
  const auto r = learn_raw({"--steps", "3", "--"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "nodeaudit: learn: no command after `--`; give the training command as you run it, e.g. nodeaudit learn -- python train.py\n");
  expect_nothing_written();
}

TEST_F(LearnBadInput, ZeroStepsNamesTheRange) {
  const auto r = learn_raw({"--steps", "0", "--", "python3", "train.py"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "nodeaudit: --steps 0: must be a whole number from 1 to 10000\n");
  expect_nothing_written();
}

TEST_F(LearnBadInput, ACommandNotFound) {
  const auto r = learn_raw({"--", "no-such-trainer-command", "x.py"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(last_line(r.err).find("cannot start 'no-such-trainer-command': No such file or directory"), std::string::npos) << r.err;
  expect_nothing_written();
}

TEST_F(LearnBadInput, AJobThatExitsAtOnceIsNamedWithItsCodeAndLastLines) {
  const auto r = learn_raw({"--", "sh", "-c", "echo loading the data; echo no such file: /data/train >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 2);
  const std::string line = last_line(r.err);
  EXPECT_NE(line.find("exited with code 3 before its first optimizer step"), std::string::npos) << line;
  EXPECT_NE(line.find("no such file: /data/train"), std::string::npos) << line;
  EXPECT_NE(r.out.find("loading the data"), std::string::npos) << "the job's output passes through";
  expect_nothing_written();
}

TEST_F(LearnBadInput, APythonWithoutTorchIsNamed) {
  if (system("/usr/bin/python3 -c 'import torch' 2>/dev/null") == 0) GTEST_SKIP() << "/usr/bin/python3 has torch here";
  const auto r = learn_raw({"--", "/usr/bin/python3", "-c", "import torch"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(last_line(r.err).find("the job's Python /usr/bin/python3 has no torch"), std::string::npos) << r.err;
  expect_nothing_written();
}

TEST_F(LearnBadInput, AnExistingProfileIsNeverOverwritten) {
  { std::ofstream(profile_path()) << "# mine\n"; }
  const auto r = learn_raw({"--", "python3", "train.py"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "nodeaudit: --out-profile " + profile_path() + ": already exists; nodeaudit never overwrites a file (choose another name)\n");
  EXPECT_EQ(read_text(profile_path()), "# mine\n");
  EXPECT_FALSE(fs::exists(result_path()));
}

// A result with none of the figures learn reads from it (a GEMM rate, storage, decode, host-to-device):
// a result of this node with host.memory-bandwidth only, cut from a recorded one.
TEST_F(LearnBadInput, AResultWithoutAnyFigureLearnReadsIsRefused) {
  nlohmann::json doc = nlohmann::json::parse(read_text(std::string(NODEAUDIT_FIXTURES) + "/compare/rounds-baseline.json"));
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& probe : doc["probes"])
    if (probe["id"] == "host.memory-bandwidth") kept.push_back(probe);
  ASSERT_EQ(kept.size(), 1u);
  doc["probes"] = kept;
  const std::string result = dir_ + "/memory-only.json";
  std::ofstream(result) << doc.dump();
  const auto r = learn_raw({"--result", result, "--", "python3", "train.py"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "nodeaudit: --result " + result +
                       ": holds no measured gpu.gemm, storage, host.decode, host.dataloader or gpu.pcie figure; run `nodeaudit run --out FILE` on this node first\n");
  expect_nothing_written();
}

TEST_F(LearnBadInput, AuditAndResultTogetherOrADataDirWithoutAudit) {
  const std::string result = std::string(NODEAUDIT_FIXTURES) + "/results/cpu-only.json";
  auto r = learn_raw({"--audit", "--result", result, "--", "python3", "train.py"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "nodeaudit: --audit --result " + result +
                       ": give one: --audit measures this node's figures itself, --result reads them from a result\n");
  r = learn_raw({"--data-dir", dir_, "--", "python3", "train.py"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "nodeaudit: --data-dir " + dir_ + ": only with --audit (the storage probes' directory)\n");
  r = learn_raw({"--audit", "--data-dir", dir_ + "/missing", "--", "python3", "train.py"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "nodeaudit: --data-dir " + dir_ + "/missing: is not an existing directory\n");
  expect_nothing_written();
}

TEST_F(LearnBadInput, AJobDyingMidRunKeepsItsStepsAndWritesNoProfile) {
  TORCH_OR_SKIP();
  const std::string images = dir_ + "/images";
  ASSERT_EQ(run_python({script("make_jpegs.py"), images, "8", "32"}), 0);
  const auto r = learn({"--warmup", "1", "--steps", "5", "--md", dir_ + "/summary.md"},
                       {script("train_cnn.py"), images, "--workers", "0", "--die-at-step", "3"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("the job exited with code 3 on step 4 of 7 (3 finished)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("simulated failure at step 3"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("no profile written: a profile needs all 7 optimizer steps"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(profile_path()));
  const nlohmann::json e = learn_entry();
  EXPECT_EQ(e["status"], "failed");
  EXPECT_EQ(e["info"]["timeline"].size(), 3u) << "the steps taken are kept";
  EXPECT_EQ(e["info"]["steps_done"], 3);
  EXPECT_TRUE(fs::exists(dir_ + "/summary.md"));
}

TEST_F(LearnBadInput, AHangingJobMeetsItsDeadlineNamingTheStep) {
  TORCH_OR_SKIP();
  const std::string images = dir_ + "/images";
  ASSERT_EQ(run_python({script("make_jpegs.py"), images, "8", "32"}), 0);
  const auto r = learn({"--warmup", "1", "--steps", "5", "--timeout", "20s"},
                       {script("train_cnn.py"), images, "--workers", "2", "--hang-at-step", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("the deadline (--timeout 20s) passed on step 3 of 7 (2 finished); the job was stopped"), std::string::npos) << r.err;
  const nlohmann::json e = learn_entry();
  EXPECT_EQ(e["status"], "timeout");
  EXPECT_EQ(e["info"]["timeline"].size(), 2u);
  EXPECT_FALSE(fs::exists(profile_path()));
  EXPECT_TRUE(processes_in_folder().empty()) << "the job and its DataLoader workers are gone";
}

}  // namespace
}  // namespace nodeaudit::learn::test
