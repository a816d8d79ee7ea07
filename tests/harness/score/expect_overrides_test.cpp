// Overriding the expected-value grading: limits and values from a profile's [expect] section and
// from --expect FILE, layered --expect over profile over the built-in table, each grade naming
// where its limits came from; bad [expect] input as one located error. Recorded H100 fixture: GPU
// 1's bf16 GEMM 700 TFLOP/s is 11.6% below MAMF's 792.1; GPU 7's pinned H2D 35 GB/s is 31% below 51.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "harness/core/errors.hpp"
#include "harness/score/expected.hpp"
#include "harness/score/score.hpp"
#include "tests/support/fixtures.hpp"

namespace nodeaudit::score {
namespace {

using nlohmann::json;

json fixture(const std::string& name) { return test_files::fixture_json("results/" + name); }

std::string balance_test_text() { return test_files::fixture_text("profiles/balance-test.toml"); }

// balance-test.toml with an [expect] section appended.
Profile profile_with(const std::string& expect_toml) {
  return parse_profile(balance_test_text() + "\n" + expect_toml, "balance-expect.toml");
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path =
      std::filesystem::temp_directory_path() / ("nodeaudit-expect-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path) << text;
  return path.string();
}

const Grade& grade_of(const Grading& grading, const std::string& figure, const std::string& gpu) {
  for (const Grade& g : grading.grades)
    if (g.figure == figure && g.gpu == gpu) return g;
  throw std::runtime_error("no grade for " + figure + " on " + gpu);
}

const std::string bf16 = "gpu.gemm tflops [dtype=bf16]";
const std::string h2d = "gpu.pcie h2d_bandwidth [memory=pinned, mode=single]";

TEST(ExpectOverrides, ProfileLimitsGradeAtBelowWarnAndBelowFail) {
  const json result = fixture("h100-graded.json");
  // GPU 1 is 11.6% below: inside a 12% warn limit, past a 5% one, past an 11% fail limit.
  const Grade at =
      grade_of(grade_expected(result, profile_with("[expect.gemm]\nwarn_below_pct = 12\n").expect), bf16, "1");
  EXPECT_EQ(at.verdict, Verdict::pass);
  EXPECT_EQ(at.warn_source, "profile balance-test [expect.gemm]");
  EXPECT_EQ(at.fail_source, "built-in table");
  EXPECT_DOUBLE_EQ(at.fail_below_pct, 20);
  const Grade warn =
      grade_of(grade_expected(result, profile_with("[expect.gemm]\nwarn_below_pct = 5\nfail_below_pct = 15\n").expect),
               bf16, "1");
  EXPECT_EQ(warn.verdict, Verdict::warn);
  const Grade fail =
      grade_of(grade_expected(result, profile_with("[expect.gemm]\nwarn_below_pct = 5\nfail_below_pct = 11\n").expect),
               bf16, "1");
  EXPECT_EQ(fail.verdict, Verdict::fail);
  EXPECT_EQ(fail.fail_source, "profile balance-test [expect.gemm]");
  // A figure the section does not name keeps the table's limits.
  const Grade other =
      grade_of(grade_expected(result, profile_with("[expect.gemm]\nwarn_below_pct = 5\n").expect), h2d, "7");
  EXPECT_EQ(other.warn_source, "built-in table");
  EXPECT_DOUBLE_EQ(other.fail_below_pct, 25);
}

TEST(ExpectOverrides, ExpectFileWinsOverTheProfileFieldByFieldAndTheVerdictSaysSo) {
  Profile profile = profile_with("[expect.gemm]\nwarn_below_pct = 5\nfail_below_pct = 11\n");
  const std::string file =
      write_temp("limits.toml", "[expect.gemm]\nfail_below_pct = 30\n[expect.h2d_pinned]\nfail_below_pct = 40\n");
  apply_expect_file(profile, file);
  const Grading grading = grade_expected(fixture("h100-graded.json"), profile.expect);
  const Grade& gemm = grade_of(grading, bf16, "1");
  EXPECT_EQ(gemm.verdict, Verdict::warn);  // 11.6% below: past the profile's 5%, inside the file's 30%
  EXPECT_EQ(gemm.warn_source, "profile balance-test [expect.gemm]");
  EXPECT_EQ(gemm.fail_source, "--expect " + file + " [expect.gemm]");
  EXPECT_EQ(grade_of(grading, h2d, "7").verdict, Verdict::warn);  // 31% below, inside 40%
  const std::optional<Rule> rule = expected_values_rule(grading);
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->verdict, Verdict::warn);
  EXPECT_NE(
      rule->text.find("WARN limit from built-in table, FAIL limit from --expect " + file + " [expect.h2d_pinned]"),
      std::string::npos)
      << rule->text;
  const json a = assess(profile, fixture("h100-graded.json"), CostOptions{});
  EXPECT_EQ(a["expected"]["limits"]["gemm"]["fail_source"], "--expect " + file + " [expect.gemm]");
  EXPECT_NE(render_assessment(a).find("limits gemm: WARN past -5%, FAIL past -30% (WARN from profile balance-test"),
            std::string::npos)
      << render_assessment(a);
  std::filesystem::remove(file);
}

TEST(ExpectOverrides, GivenValuesReplaceTheTablesAndGradeWhatItCannot) {
  // 900 for bf16 puts GPU 0's 790 12.2% below; fp16, a derived figure in the table, becomes gradable.
  const Profile profile = profile_with(
      "[expect.gemm]\nsource = \"vendor acceptance sheet\"\nh100 = { bf16 = 900, fp16 = 800 }\n"
      "[expect.allreduce]\nh100 = 480\n");
  const Grading grading = grade_expected(fixture("h100-graded.json"), profile.expect);
  EXPECT_EQ(grading.grades.size(), 25u);  // 17 + fp16 on 8 GPUs
  const Grade& gemm = grade_of(grading, bf16, "0");
  EXPECT_DOUBLE_EQ(gemm.expected, 900);
  EXPECT_EQ(gemm.verdict, Verdict::warn);
  EXPECT_EQ(gemm.source, "profile balance-test [expect.gemm].h100: vendor acceptance sheet");
  const Grade& fp16 = grade_of(grading, "gpu.gemm tflops [dtype=fp16]", "0");
  EXPECT_DOUBLE_EQ(fp16.expected, 800);
  const Grade& allreduce = grade_of(grading, "comm.allreduce busbw [gpus=8, size=2147483648]", "node");
  EXPECT_DOUBLE_EQ(allreduce.expected, 480);
  EXPECT_NE(allreduce.source.find("largest size measured (2147483648 B)"), std::string::npos) << allreduce.source;
}

TEST(ExpectOverrides, AModelOutsideTheTableStaysNotGradedWhateverIsGiven) {
  // balanced.json's GPUs are not in the table: still not graded, whatever the settings give for h100.
  const Profile profile = profile_with("[expect.h2d_pinned]\nh100 = 50\n");
  const Grading grading = grade_expected(fixture("balanced.json"), profile.expect);
  EXPECT_TRUE(grading.grades.empty());
  EXPECT_EQ(grading.not_graded.at(0), "GPU 0 (Fixture GPU 42GB): no reference for this model");
}

void expect_bad(const std::string& expect_toml, const std::string& says) {
  try {
    (void)profile_with(expect_toml);
    ADD_FAILURE() << "accepted: " << expect_toml;
  } catch (const UsageError& error) {
    const std::string text = std::string(error.what());
    EXPECT_NE(text.find(says), std::string::npos) << text;
    EXPECT_EQ(text.find('\n'), std::string::npos) << "one line: " << text;
  }
}

TEST(ExpectOverrides, BadSectionsNameTheValueAndWhatIsAccepted) {
  expect_bad("[expect.gemn]\nwarn_below_pct = 5\n",
             "unknown key 'gemn' in [expect]; accepted: gemm, memory_copy, h2d_pinned, allreduce");
  expect_bad("[expect.gemm]\nwarn_below_pct = \"ten\"\n", "'warn_below_pct' in [expect.gemm] must be a number");
  expect_bad("[expect.gemm]\nfail_below_pct = 150\n", "from 0 to under 100");
  expect_bad("[expect.gemm]\nwarn_below_pct = -1\n", "must not be negative");
  expect_bad("[expect.gemm]\nwarn_below_pct = 30\nfail_below_pct = 20\n",
             "'warn_below_pct' 30 in [expect.gemm] is above 'fail_below_pct' 20");
  expect_bad("[expect.h2d_pinned]\nwarn_below_pct = 30\n",
             "[expect.h2d_pinned] warn_below_pct 30 (profile balance-test [expect.h2d_pinned]) is above fail_below_pct "
             "25 (built-in table)");
  expect_bad("[expect.gemm]\nh900 = { bf16 = 1 }\n",
             "unknown key 'h900' in [expect.gemm]; accepted: warn_below_pct, "
             "fail_below_pct, source, or a GPU model of the table (h100");
  expect_bad("[expect.gemm]\nh100 = { bf17 = 1 }\n", "unknown key 'bf17' in [expect.gemm.h100]; accepted: fp64");
  expect_bad("[expect.gemm]\nh100 = 794\n", "'h100' in [expect.gemm] must be a table of dtypes");
  expect_bad("[expect.memory_copy]\nh200 = 0\n",
             "'h200' in [expect.memory_copy] is 0; must be a positive number (GB/s)");
  expect_bad("[expect.memory_copy]\nh200 = \"4 TB/s\"\n",
             "'h200' in [expect.memory_copy] must be a positive number (GB/s), got \"4 TB/s\"");
}

TEST(ExpectOverrides, AnExpectFileHoldsOnlyTheExpectSection) {
  const std::string stray = write_temp("stray.toml", "[expect.gemm]\nwarn_below_pct = 5\n[thresholds]\nx = 1\n");
  EXPECT_THROW((void)load_expect_file(stray), UsageError);
  const std::string empty = write_temp("empty.toml", "# nothing\n");
  EXPECT_THROW((void)load_expect_file(empty), UsageError);
  EXPECT_THROW((void)load_expect_file("/nonexistent/expect.toml"), UsageError);
  std::filesystem::remove(stray);
  std::filesystem::remove(empty);
}

}  // namespace
}  // namespace nodeaudit::score
