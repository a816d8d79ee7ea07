// `nodeaudit report --fleet` end to end through the real binary, over a generated fleet written to a
// directory (tests/harness/report/fleet_fixture.hpp): exit 1 when a node fails, 0 when none does; files that
// are not results skipped with their reasons and counted; a node's second result, option values out
// of range and vendor-report options refused with one line and exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/harness/report/fleet_fixture.hpp"
#include "tests/support/cli_process.hpp"

namespace fs = std::filesystem;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::ProcessResult;
using nodeaudit::proc::run_process;

namespace {

std::string compare_fixture(const std::string& name) {
  return std::string(NODEAUDIT_FIXTURES) + "/compare/" + name;
}

void expect_one_line_error(const ProcessResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out.substr(0, 500);
  EXPECT_EQ(r.err.rfind("nodeaudit: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 500);
}

class FleetCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("fleet"); }
  void TearDown() override { fs::remove_all(dir_); }
  ProcessResult fleet(std::vector<std::string> extra) {
    std::vector<std::string> argv = {NODEAUDIT_BINARY, "report", "--fleet"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_process(argv);
  }
  std::string dir_;
};

}  // namespace

TEST_F(FleetCli, ExitOneNamesTheFailingNodesExitZeroWhenNoneFails) {
  nodeaudit::test::write_generated_fleet(dir_, 20);
  const ProcessResult failed = fleet({dir_});
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_NE(failed.out.find("## Verdict: FAIL: 2 of 20 nodes fail"), std::string::npos) << failed.out.substr(0, 3000);
  EXPECT_NE(failed.out.find("| node-07 | gpu.gemm tflops [dtype=bf16] (median GPU): "), std::string::npos);
  EXPECT_NE(failed.out.find("| node-12 | 3 | gpu.gemm tflops [dtype=bf16] |"), std::string::npos);
  EXPECT_NE(failed.out.find("|  | `550.90.07` | node-03, node-09, node-15 (3) |"), std::string::npos);
  // The first six nodes hold none of the planted faults but node-03's driver: drift alone passes,
  // unless --fail-on-drift; the files are given one by one, as a shell glob gives them.
  std::vector<std::string> six;
  for (int n = 1; n <= 6; ++n) six.push_back(fmt::format("{}/node-{:02}.json", dir_, n));
  const ProcessResult passed = fleet(six);
  EXPECT_EQ(passed.exit_code, 0) << passed.err << passed.out.substr(0, 2000);
  EXPECT_NE(passed.out.find("## Verdict: PASS: all 6 nodes within the fleet's limits"), std::string::npos);
  six.push_back("--fail-on-drift");
  const ProcessResult gated = fleet(six);
  EXPECT_EQ(gated.exit_code, 1) << gated.err;
  EXPECT_NE(gated.out.find("| node-03 | software.driver is `550.90.07`; most nodes: `550.54.15` |"), std::string::npos)
      << gated.out.substr(0, 2000);
}

TEST_F(FleetCli, FilesThatAreNotResultsAreSkippedWithTheirReasonAndCounted) {
  nodeaudit::test::write_generated_fleet(dir_, 4);
  std::ofstream(dir_ + "/inventory.json") << "{\"racks\": 3}\n";
  fs::copy_file(compare_fixture("empty.json"), dir_ + "/empty.json");
  fs::copy_file(compare_fixture("truncated.json"), dir_ + "/truncated.json");
  fs::copy_file(compare_fixture("schema-v2.json"), dir_ + "/old-schema.json");
  std::ofstream(dir_ + "/README.txt") << "not json, not read\n";
  const std::string md = dir_ + "/fleet.md", html = dir_ + "/fleet.html";
  const ProcessResult r = fleet({dir_, "--md", md, "--html", html});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("4 nodes judged against each other; 4 inputs skipped (listed at the end)."), std::string::npos)
      << r.out.substr(0, 800);
  EXPECT_NE(r.out.find("/inventory.json`: is not a nodeaudit result"), std::string::npos);
  EXPECT_NE(r.out.find("/empty.json`: is empty"), std::string::npos);
  EXPECT_NE(r.out.find("/truncated.json`: is not valid JSON (truncated or corrupt?)"), std::string::npos);
  EXPECT_NE(
      r.out.find(
          "/old-schema.json`: has schema \"nodeaudit.result/2\"; this nodeaudit reads only \"nodeaudit.result/1\""),
      std::string::npos);
  EXPECT_EQ(r.out.find("README.txt"), std::string::npos) << "only .json files are inputs";
  EXPECT_EQ(nodeaudit::test::read_text(md), r.out);
  EXPECT_NE(nodeaudit::test::read_text(html).find("<details class=\"probe\" id=\"fleet-gpu.gemm\">"),
            std::string::npos);
  // Written once: a second run refuses before reading anything.
  expect_one_line_error(fleet({dir_, "--md", md}), "never overwrites");
}

TEST_F(FleetCli, NothingButNonResultsIsExitTwo) {
  std::ofstream(dir_ + "/inventory.json") << "[1, 2, 3]\n";
  fs::copy_file(compare_fixture("empty.json"), dir_ + "/empty.json");
  expect_one_line_error(fleet({dir_}), "(2 files): no nodeaudit result among them; 2 skipped, the first: ");
  const std::string empty_dir = dir_ + "/none";
  fs::create_directory(empty_dir);
  expect_one_line_error(fleet({empty_dir}), "is a directory with no .json file");
}

// Runs of one node are told apart by their start time (see FleetRuns for several runs of a node).
TEST_F(FleetCli, TwoCopiesOfOneRunAreRefusedNamingBothFiles) {
  nodeaudit::test::write_generated_fleet(dir_, 3);
  fs::copy_file(dir_ + "/node-02.json", dir_ + "/node-02-rerun.json");
  expect_one_line_error(fleet({dir_}), "node name 'node-02': held by both " + dir_ + "/node-02-rerun.json and " + dir_ +
                                           "/node-02.json, runs that started at the same time");
}

TEST_F(FleetCli, BadOptionsExitTwoNamingTheValueAndWhatIsAccepted) {
  nodeaudit::test::write_generated_fleet(dir_, 3);
  expect_one_line_error(fleet({dir_, "--outlier-mad", "0"}),
                        "--outlier-mad 0: expected a number of MADs above 0 (3, 3.5)");
  expect_one_line_error(fleet({dir_, "--outlier-mad", "three"}), "--outlier-mad three: expected a non-negative number");
  expect_one_line_error(fleet({dir_, "--outlier-floor", "abc"}),
                        "--outlier-floor abc: expected a non-negative percentage");
  expect_one_line_error(fleet({dir_, "--gpu-below-best", "150%"}),
                        "--gpu-below-best 150%: expected a percentage below 100 (10%, 5)");
  expect_one_line_error(fleet({dir_, "--profile", "llm-finetune-7b"}),
                        "--profile with --fleet: a fleet report judges nodes against each other");
  expect_one_line_error(
      run_process({NODEAUDIT_BINARY, "report", dir_ + "/node-01.json", dir_ + "/node-02.json", "--outlier-mad", "4"}),
      "--outlier-mad: applies only with --fleet");
}
