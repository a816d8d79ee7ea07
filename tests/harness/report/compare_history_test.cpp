// `compare` with this node's history: a results folder (positional or --history) gives the earlier
// runs of the candidate's host, each one run; a folder without such runs is refused naming the hosts
// it holds; --confirm refuses a candidate measured on another host. Real processes, real files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "harness/report/history.hpp"
#include "tests/support/cli_process.hpp"

namespace fs = std::filesystem;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::ProcessResult;
using nodeaudit::proc::run_process;

namespace {

std::string fixture(const std::string& name) {
  return std::string(NODEAUDIT_FIXTURES) + "/compare/" + name;
}

void expect_one_line_error(const ProcessResult& r, const std::string& expected) {
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_EQ(r.err, expected);
  EXPECT_TRUE(r.out.empty()) << r.out;
}

class CompareHistory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("history");
    // Two runs of fixture-cpu-node, one of fixture-other-node, and a file that is not a result.
    for (const char* name :
         {"rounds-baseline.json", "rounds-baseline-b.json", "rounds-other-host.json", "not-nodeaudit.json"})
      fs::copy_file(fixture(name), dir_ + "/" + name);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(CompareHistory, TheFolderGivesThisHostsRunsEachAsOneRun) {
  for (const auto& argv :
       {std::vector<std::string>{NODEAUDIT_BINARY, "compare", "--history", dir_, fixture("rounds-candidate-drop.json")},
        std::vector<std::string>{NODEAUDIT_BINARY, "compare", dir_ + "/", fixture("rounds-candidate-drop.json")}}) {
    const ProcessResult r = run_process(argv);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err << r.out;
    EXPECT_NE(r.out.find("rounds-baseline.json"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("rounds-baseline-b.json"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("rounds-other-host.json"), std::string::npos)
        << "another host's run is not this node's history: " << r.out;
    // Two earlier runs and the candidate, each one run (their rounds merged): 2 + 1 runs in the rule.
    EXPECT_NE(r.out.find("99% t-interval of the difference of means, 2 + 1 runs"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1,000 (2 runs: 1,000 .. 1,000)"), std::string::npos) << r.out;
  }
}

TEST_F(CompareHistory, AFolderWithoutThisHostsRunsIsRefusedNamingTheHostsItHolds) {
  fs::remove(dir_ + "/rounds-baseline.json");
  fs::remove(dir_ + "/rounds-baseline-b.json");
  expect_one_line_error(
      run_process({NODEAUDIT_BINARY, "compare", "--history", dir_, fixture("rounds-candidate-drop.json")}),
      "nodeaudit: --history " + dir_ +
          ": no run of this host (fixture-cpu-node) in it; it holds results of "
          "fixture-other-node (1 run) only\n");
}

TEST_F(CompareHistory, ConfirmRefusesACandidateMeasuredOnAnotherHost) {
  const ProcessResult r = run_process({NODEAUDIT_BINARY, "compare", fixture("rounds-baseline.json"),
                                       fixture("rounds-candidate-drop.json"), "--confirm"});
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_EQ(r.err.rfind("nodeaudit: --confirm: the candidate " + fixture("rounds-candidate-drop.json") +
                            " was run on fixture-cpu-node, not on this host (",
                        0),
            0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(SmallestCallableChange, IsTheHalfWidthForOneNewRunAgainstTheHistory) {
  // Four earlier runs 100, 102, 98, 100: mean 100, sd sqrt(8 / 3) = 1.633; t(0.995, 3) = 5.8409 (tables);
  // sqrt(1/4 + 1/1) = 1.118: 10.66% of the mean.
  EXPECT_NEAR(nodeaudit::report::smallest_callable_change_pct({100, 102, 98, 100}),
              5.8409 * std::sqrt(8.0 / 3) * std::sqrt(1.25), 1e-3);
  EXPECT_TRUE(std::isinf(nodeaudit::report::smallest_callable_change_pct({100})));
}

}  // namespace
