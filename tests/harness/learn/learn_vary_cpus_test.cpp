// `learn --vary cpus=..`: the job's whole process tree confined to N CPUs (its DataLoader workers
// included), the mechanism said, the measured answer and the prediction per value printed; a value
// above the CPUs learn may use is refused before anything runs.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <map>

#include "tests/harness/learn/learn_test_util.hpp"

namespace nodeaudit::learn::test {
namespace {

int allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

class LearnVaryCpus : public LearnCli {};

TEST_F(LearnVaryCpus, EveryProcessOfTheJobIsConfinedToEachValue) {
  TORCH_OR_SKIP();
  if (allowed_cpus() < 2) GTEST_SKIP() << "needs 2 CPUs to vary between 1 and 2";
  const std::string log = dir_ + "/affinity.log";
  const auto r = learn({"--vary", "cpus=1,2", "--repeats", "2", "--warmup", "1", "--steps", "2"}, {script("affinity_job.py"), log});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  // Every process of every run recorded its CPUs: the runs of cpus=1 saw 1, those of cpus=2 saw 2
  // (the probe run is not confined: it sees them all).
  std::map<std::string, std::map<int, int>> seen;  // who -> CPUs -> count
  std::istringstream lines(read_text(log));
  for (std::string who; lines >> who;) {
    int cpus = 0;
    lines >> cpus;
    seen[who][cpus]++;
  }
  EXPECT_EQ(seen["main"][1], 2) << read_text(log);
  EXPECT_GE(seen["worker"][1], 4) << "two workers in each of the two cpus=1 runs: " << read_text(log);
  EXPECT_GE(seen["worker"][2], 4) << read_text(log);
  const nlohmann::json info = nlohmann::json::parse(read_text(result_path()))["probes"][0]["info"];
  EXPECT_FALSE(info.value("confinement", "").empty()) << info.dump().substr(0, 1000);
  EXPECT_NE(r.out.find("cpus confined by "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpus=1: predicted "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpus: the job needs "), std::string::npos) << r.out;
}

TEST_F(LearnVaryCpus, AValueAboveTheMachinesCpusIsRefusedBeforeAnythingRuns) {
  const std::string too_many = std::to_string(allowed_cpus() + 1);
  const std::string log = dir_ + "/affinity.log";
  const auto r = learn({"--vary", "cpus=1," + too_many}, {script("affinity_job.py"), log});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--vary cpus=" + too_many), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("give values from 1 to " + std::to_string(allowed_cpus())), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(log)) << "the job must not have run";
  EXPECT_FALSE(std::filesystem::exists(result_path())) << "no result left behind";
}

}  // namespace
}  // namespace nodeaudit::learn::test
