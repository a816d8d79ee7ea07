// Expected values: measured GPU figures graded against the GPU table's published measurements for
// the same model. Recorded H100 fixture: GPU 1's GEMM 11.6% below MAMF (WARN past 10%), GPU 7's
// pinned host-to-device 31% below nvbandwidth's 51 GB/s (FAIL past 25%), the rest at or above.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "harness/score/expected.hpp"
#include "harness/score/score.hpp"
#include "tests/support/fixtures.hpp"

namespace nodeaudit::score {
namespace {

using nlohmann::json;

json fixture(const std::string& name) { return test_files::fixture_json("results/" + name); }

const Profile& balance_test() {
  static const Profile profile = load_profile(std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml");
  return profile;
}

const Grade* find_grade(const Grading& grading, const std::string& figure, const std::string& gpu) {
  for (const Grade& g : grading.grades)
    if (g.figure == figure && g.gpu == gpu) return &g;
  return nullptr;
}

TEST(ExpectedValues, AtBelowWarnAndBelowFailAgainstTheTablesMeasurements) {
  const Grading grading = grade_expected(fixture("h100-graded.json"));
  ASSERT_EQ(grading.grades.size(), 17u);  // 8 GPUs x (bf16 GEMM, pinned H2D) + the all-reduce
  // H100's fp16 figure is its bf16 MAMF taken for fp16: never a yardstick.
  ASSERT_EQ(grading.not_graded.size(), 8u);
  EXPECT_EQ(grading.not_graded[0],
            "gpu.gemm tflops [dtype=fp16] on GPU 0 (h100): the table's figure is derived from another measurement");
  const Grade* at = find_grade(grading, "gpu.gemm tflops [dtype=bf16]", "0");
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(at->verdict, Verdict::pass);
  EXPECT_DOUBLE_EQ(at->expected, 792.1);
  EXPECT_NEAR(at->below_pct, (792.1 - 790) / 792.1 * 100, 1e-9);
  const Grade* warn = find_grade(grading, "gpu.gemm tflops [dtype=bf16]", "1");
  ASSERT_NE(warn, nullptr);
  EXPECT_EQ(warn->verdict, Verdict::warn);
  EXPECT_NEAR(warn->below_pct, 11.6, 0.05);
  const Grade* fail = find_grade(grading, "gpu.pcie h2d_bandwidth [memory=pinned, mode=single]", "7");
  ASSERT_NE(fail, nullptr);
  EXPECT_EQ(fail->verdict, Verdict::fail);
  EXPECT_DOUBLE_EQ(fail->expected, 51);
  EXPECT_NE(fail->source.find("nvbandwidth"), std::string::npos) << fail->source;
  // The concurrent-copy figure has no published counterpart: it is not graded.
  EXPECT_EQ(find_grade(grading, "gpu.pcie h2d_bandwidth [memory=pinned, mode=concurrent]", "0"), nullptr);
  const Grade* allreduce = find_grade(grading, "comm.allreduce busbw [gpus=8, size=2147483648]", "node");
  ASSERT_NE(allreduce, nullptr);
  EXPECT_DOUBLE_EQ(allreduce->expected, 472.36);  // nccl-tests over 8 H100s at 2 GiB
  EXPECT_EQ(allreduce->verdict, Verdict::pass);
}

TEST(ExpectedValues, TheRuleFailsNamingTheFurthestFigureAndTheVerdictCarriesIt) {
  const json a = assess(balance_test(), fixture("h100-graded.json"), CostOptions{});
  const json* rule = nullptr;
  for (const json& r : a["rules"])
    if (r["rule"] == "expected_values") rule = &r;
  ASSERT_NE(rule, nullptr) << a["rules"];
  EXPECT_EQ((*rule)["verdict"], "FAIL");
  EXPECT_NE((*rule)["text"].get<std::string>().find(
                "furthest: gpu.pcie h2d_bandwidth [memory=pinned, mode=single] on GPU 7 35 GB/s vs 51 expected for h100"),
            std::string::npos)
      << (*rule)["text"];
  EXPECT_EQ(a["overall"]["verdict"], "FAIL");
  EXPECT_EQ(a["expected"]["grades"].size(), 17u);
}

TEST(ExpectedValues, AModelWithoutReferencesIsNotGradedAndAddsNoRule) {
  const json a = assess(balance_test(), fixture("balanced.json"), CostOptions{});
  for (const json& r : a["rules"]) EXPECT_NE(r["rule"], "expected_values");
  EXPECT_EQ(a["overall"]["verdict"], "PASS");  // unchanged by a model the table does not know
  ASSERT_FALSE(a["expected"]["not_graded"].empty());
  EXPECT_EQ(a["expected"]["not_graded"][0], "GPU 0 (Fixture GPU 42GB): no reference for this model");
  EXPECT_NE(render_assessment(a).find("not graded: GPUs (Fixture GPU 42GB): no reference for this model"),
            std::string::npos);
}

TEST(ExpectedValues, JudgedForTargetGpusTheOwnGpusDoNotEnterTheVerdict) {
  const TargetGpus target = parse_target_gpus("h200x8");
  const json a = assess(balance_test(), fixture("h100-graded.json"), CostOptions{}, &target);
  for (const json& r : a["rules"]) EXPECT_NE(r["rule"], "expected_values");
}

}  // namespace
}  // namespace nodeaudit::score
