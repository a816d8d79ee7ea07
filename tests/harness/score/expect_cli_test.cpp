// --expect FILE on `score`, `report` and `run` through the real binary: it regrades and says where
// the limits came from; a bad file is one line naming the bad value and what is accepted, exit 2,
// before anything runs or is written.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/harness/score/score_cli.hpp"
#include "tests/support/fixtures.hpp"

namespace {

using nodeaudit::score_test::CliRun;
using nodeaudit::score_test::run_cli;

using nodeaudit::test_files::fixture;
const std::string test_profile = fixture("profiles/balance-test.toml");
const std::string graded = fixture("results/h100-graded.json");

class ExpectCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("nodeaudit-expect-cli-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string file(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  void expect_one_line_exit_2(const CliRun& run, const std::string& says) {
    EXPECT_EQ(run.exit_code, 2) << run.out;
    EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
    EXPECT_NE(run.out.find(says), std::string::npos) << run.out;
  }
  std::filesystem::path dir_;
};

}  // namespace

TEST_F(ExpectCli, ScoreRegradesWithTheFileAndSaysWhereTheLimitsCameFrom) {
  // GPU 7's pinned H2D is 31% below: FAIL on the table's 25%, WARN under a 40% fail limit.
  const std::string limits = file("limits.toml", "[expect.h2d_pinned]\nfail_below_pct = 40\n");
  const CliRun table = run_cli("score " + graded + " --profile " + test_profile + " --format json");
  ASSERT_EQ(table.exit_code, 1) << table.out;
  const CliRun run =
      run_cli("score " + graded + " --profile " + test_profile + " --expect " + limits + " --format json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto a = nlohmann::json::parse(run.out);
  EXPECT_EQ(a["expected"]["limits"]["h2d_pinned"]["fail_source"], "--expect " + limits + " [expect.h2d_pinned]");
  EXPECT_EQ(a["expected"]["limits"]["h2d_pinned"]["warn_source"], "built-in table");
  for (const auto& rule : a["rules"])
    if (rule["rule"] == "expected_values") {
      EXPECT_EQ(rule["verdict"], "WARN") << rule["text"];
    }
  const CliRun text = run_cli("score " + graded + " --profile " + test_profile + " --expect " + limits);
  EXPECT_NE(text.out.find("limits h2d_pinned: WARN past -10%, FAIL past -40% (WARN from built-in table; FAIL from "
                             "--expect " +
                             limits + " [expect.h2d_pinned])"),
            std::string::npos)
      << text.out;
}

TEST_F(ExpectCli, BadExpectFilesExitTwoWithOneLine) {
  const std::string score = "score " + graded + " --profile " + test_profile + " --expect ";
  expect_one_line_exit_2(run_cli(score + file("figure.toml", "[expect.gemn]\nwarn_below_pct = 5\n")),
                         "unknown key 'gemn' in [expect]; accepted: gemm, memory_copy, h2d_pinned, allreduce");
  expect_one_line_exit_2(run_cli(score + file("number.toml", "[expect.gemm]\nwarn_below_pct = \"ten\"\n")),
                         "number.toml:2:18: 'warn_below_pct' in [expect.gemm] must be a number, got a string");
  expect_one_line_exit_2(
      run_cli(score + file("order.toml", "[expect.gemm]\nwarn_below_pct = 30\nfail_below_pct = 20\n")),
      "'warn_below_pct' 30 in [expect.gemm] is above 'fail_below_pct' 20");
  expect_one_line_exit_2(run_cli(score + file("over.toml", "[expect.allreduce]\nwarn_below_pct = 30\n")),
                         "warn_below_pct 30 (--expect");
  expect_one_line_exit_2(run_cli(score + (dir_ / "missing.toml").string()),
                         "missing.toml: cannot be read (no such file or no permission)");
  expect_one_line_exit_2(run_cli(score + file("top.toml", "warn_below_pct = 5\n")),
                         "unknown key 'warn_below_pct' in the top level; accepted: expect");
}

TEST_F(ExpectCli, ReportAndRunCheckTheFileBeforeAnything) {
  const std::string bad = file("bad.toml", "[expect.gemn]\n");
  const std::string md = (dir_ / "r.md").string();
  expect_one_line_exit_2(
      run_cli("report " + graded + " --profile " + test_profile + " --expect " + bad + " --md " + md),
      "unknown key 'gemn' in [expect]");
  EXPECT_FALSE(std::filesystem::exists(md)) << "nothing written";
  expect_one_line_exit_2(run_cli("report " + graded + " --expect " + bad), "--expect " + bad + ": needs --profile");
  const std::string out = (dir_ / "run.json").string();
  expect_one_line_exit_2(
      run_cli("run --only host.memory-bandwidth --profile " + test_profile + " --expect " + bad + " --out " + out),
      "unknown key 'gemn' in [expect]");
  EXPECT_FALSE(std::filesystem::exists(out)) << "no probe ran, no result written";
  expect_one_line_exit_2(run_cli("run --only host.memory-bandwidth --expect " + bad + " --out " + out),
                         "needs --profile");
  // A good file reaches the report's assessment.
  const std::string good = file("good.toml", "[expect.h2d_pinned]\nfail_below_pct = 40\n");
  const CliRun report = run_cli("report " + graded + " --profile " + test_profile + " --expect " + good);
  EXPECT_EQ(report.exit_code, 0) << report.out;
}
