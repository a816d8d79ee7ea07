// The printers against golden files (a format change is a visible diff) and JUnit's counts.
#include <gtest/gtest.h>

#include "harness/report/compare_render.hpp"
#include "harness/report/report_markdown.hpp"
#include "tests/harness/report/fixture_util.hpp"
#include "tests/support/text_search.hpp"

using namespace nodeaudit;
using namespace nodeaudit::report;
using namespace nodeaudit::test;

namespace {

using nodeaudit::test::find_on_path;
using nodeaudit::test::occurrences;

Comparison labelled(const std::string& candidate) {
  Comparison c = compare_results(load_compare("baseline.json"), load_compare(candidate), {});
  c.baseline_label = "baseline.json";
  c.candidate_label = candidate;
  return c;
}

}  // namespace

TEST(CompareMarkdown, RegressionMatchesGolden) {
  expect_matches_golden(render_compare_markdown(labelled("candidate-hbm-regression.json")), "compare-hbm-regression.md");
}

TEST(CompareMarkdown, MissingMetricMatchesGolden) {
  expect_matches_golden(render_compare_markdown(labelled("candidate-missing-metric.json")), "compare-missing-metric.md");
}

TEST(CompareMarkdown, EnvironmentComesBeforeTheFigures) {
  const std::string md = render_compare_markdown(labelled("candidate-hbm-regression.json"));
  const auto env = md.find("## Environment differences");
  const auto changed = md.find("## Changed beyond noise");
  ASSERT_NE(env, std::string::npos);
  ASSERT_NE(changed, std::string::npos);
  EXPECT_LT(env, changed);
  EXPECT_NE(md.find("| software.driver | 550.54.15 | 560.35.03 |"), std::string::npos) << md;
  EXPECT_NE(md.find("**REGRESSION**: 4 regressed"), std::string::npos) << md;
}

TEST(CompareJunit, OneTestcasePerMetricAndAFailurePerRegression) {
  const std::string xml = render_compare_junit(labelled("candidate-missing-metric.json"));
  EXPECT_EQ(occurrences(xml, "<testcase "), 23u + 2u);
  EXPECT_EQ(occurrences(xml, "<skipped message=\"only in the "), 2u);
  EXPECT_EQ(occurrences(xml, "<failure "), 0u);
  const std::string regressed = render_compare_junit(labelled("candidate-hbm-regression.json"));
  EXPECT_EQ(occurrences(regressed, "<testcase "), 24u);
  EXPECT_EQ(occurrences(regressed, "<failure type=\"regression\""), 4u);
  EXPECT_NE(regressed.find("failures=\"4\""), std::string::npos);
  EXPECT_NE(regressed.find("<property name=\"env.software.driver\" value=\"550.54.15 -&gt; 560.35.03\"/>"), std::string::npos);
  EXPECT_NE(regressed.find("classname=\"gpu.memory-bandwidth\" name=\"bandwidth [gpu=0, kernel=copy]\""), std::string::npos);
}

TEST(CompareJunit, CrashedProbeIsAFailedTestcase) {
  const std::string xml = render_compare_junit(labelled("candidate-probe-crashed.json"));
  EXPECT_NE(xml.find("<testcase classname=\"comm.allreduce\" name=\"status\">\n      <failure type=\"status\" message=\"was ok, now crashed"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("failures=\"1\""), std::string::npos);
}

TEST(ReportMarkdown, TwoVendorsWithPricesMatchesGolden) {
  const score::Profile profile = score::load_profile(std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml");
  const std::vector<NodeInput> inputs = {
      {"vendor-a", "", load_result_file(results_fixture("balanced.json")), 12.5},
      {"vendor-b", "", load_result_file(results_fixture("storage-starved.json")), 10.0}};
  expect_matches_golden(render_report_markdown(build_report(inputs, &profile, true)), "report-two-vendors.md");
}
