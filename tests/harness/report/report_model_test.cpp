// The vendor report's model: shared metrics, cost per node and the cheapest, redaction, charts.
#include <gtest/gtest.h>

#include "harness/core/errors.hpp"
#include "harness/report/chart_data.hpp"
#include "harness/report/redact.hpp"
#include "harness/report/report_html.hpp"
#include "harness/report/svg.hpp"
#include "tests/harness/report/fixture_util.hpp"

using namespace nodeaudit;
using namespace nodeaudit::report;
using namespace nodeaudit::test;

namespace {

score::Profile balance_profile() {
  return score::load_profile(std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml");
}

std::vector<NodeInput> two_vendors(std::optional<double> price_a, std::optional<double> price_b) {
  return {{"vendor-a", "", load_result_file(results_fixture("balanced.json")), price_a},
          {"vendor-b", "", load_result_file(results_fixture("storage-starved.json")), price_b}};
}

}  // namespace

TEST(ReportModel, CheapestIsByRunCostNotHourlyPrice) {
  const score::Profile profile = balance_profile();
  const Report same_price = build_report(two_vendors(10.0, 10.0), &profile, false);
  ASSERT_TRUE(same_price.nodes[0].cost && same_price.nodes[1].cost);
  EXPECT_LT(same_price.nodes[0].cost->predicted_hours, same_price.nodes[1].cost->predicted_hours)
      << "the storage-starved node needs longer for the same run";
  EXPECT_EQ(same_price.cheapest, 0);
  const double hours_a = same_price.nodes[0].cost->predicted_hours, hours_b = same_price.nodes[1].cost->predicted_hours;
  // Price B low enough that its longer run is cheaper overall.
  const Report cheap_b = build_report(two_vendors(10.0, 10.0 * hours_a / hours_b * 0.9), &profile, false);
  EXPECT_EQ(cheap_b.cheapest, 1);
  EXPECT_NEAR(cheap_b.nodes[0].cost->total, 10.0 * hours_a, 1e-9);
}

TEST(ReportModel, UnpricedNodeIsNotCostedAndSaysWhy) {
  const score::Profile profile = balance_profile();
  const Report r = build_report(two_vendors(10.0, std::nullopt), &profile, false);
  EXPECT_EQ(r.cheapest, 0);
  EXPECT_FALSE(r.nodes[1].cost);
  EXPECT_EQ(r.nodes[1].cost_note, "no price given");
}

TEST(ReportModel, PriceWithoutProfileIsRefused) {
  EXPECT_THROW(build_report(two_vendors(10.0, std::nullopt), nullptr, false), UsageError);
}

TEST(ReportModel, SharedMetricsAreThoseOnEveryNode) {
  const std::vector<NodeInput> inputs = {{"a", "", load_result_file(results_fixture("balanced.json")), {}},
                                         {"b", "", load_result_file(results_fixture("gpu-skipped.json")), {}}};
  const Report r = build_report(inputs, nullptr, false);
  ASSERT_FALSE(r.shared.empty());
  for (const auto& row : r.shared) {
    EXPECT_EQ(row.per_node.size(), 2u);
    EXPECT_EQ(row.display.rfind("gpu.", 0), std::string::npos) << "GPU probes were skipped on b: " << row.display;
  }
  EXPECT_GT(r.not_shared, 0u);
}

TEST(Redact, RemovesHostnamesUuidsAndCommandButKeepsFigures) {
  nlohmann::json doc = load_compare("baseline.json");
  doc["probes"][0]["findings"].push_back({{"severity", "info"}, {"code", "x"}, {"message", "ran on fixture-node-a with GPU-3f2a9c1e-0d4b-4c8e-9a7f-000000000000"}});
  doc["env"]["gpus"][0]["serial"] = "1320221234567";
  const nlohmann::json redacted = redact_result(doc);
  const std::string text = redacted.dump();
  EXPECT_EQ(text.find("fixture-node-a"), std::string::npos);
  EXPECT_EQ(text.find("3f2a9c1e"), std::string::npos);
  EXPECT_EQ(text.find("1320221234567"), std::string::npos);
  EXPECT_EQ(text.find("0000:10:00.0"), std::string::npos);
  EXPECT_FALSE(redacted.contains("command"));
  EXPECT_EQ(redacted["probes"][0]["metrics"], doc["probes"][0]["metrics"]);
  EXPECT_EQ(redacted["env"]["gpus"].size(), 2u);
  EXPECT_EQ(redacted["env"]["gpus"][0]["name"], "Fixture GPU 80GB");
}

TEST(Charts, EveryChartHasTheNodesFigures) {
  const std::vector<NodeInput> inputs = {{"base", "", load_compare("baseline.json"), {}},
                                         {"cand", "", load_compare("candidate-hbm-regression.json"), {}}};
  const ChartSet charts = build_charts(build_report(inputs, nullptr, false));
  ASSERT_EQ(charts.gemm.categories, (std::vector<std::string>{"fp32", "bf16"}));
  EXPECT_DOUBLE_EQ(*charts.gemm.values[1][0], 697.5);  // median of 700 and 695
  ASSERT_EQ(charts.bandwidth.size(), 4u);
  EXPECT_DOUBLE_EQ(*charts.bandwidth[0].values[0][0], 2990);  // HBM copy, median of 3000 and 2980
  EXPECT_DOUBLE_EQ(*charts.bandwidth[0].values[0][1], 2691);
  EXPECT_DOUBLE_EQ(*charts.bandwidth[3].values[0][0], 350);
  ASSERT_EQ(charts.allreduce_curve.points[0].size(), 4u);
  EXPECT_DOUBLE_EQ(charts.allreduce_curve.points[0][0].first, 1048576);
  EXPECT_DOUBLE_EQ(charts.allreduce_curve.points[0][0].second, 40);
  ASSERT_EQ(charts.storage_sweep.points[1].size(), 5u);
  EXPECT_DOUBLE_EQ(charts.storage_sweep.points[1][4].first, 16);
  EXPECT_EQ(charts.uniformity.categories, (std::vector<std::string>{"GPU 0", "GPU 1"}));
}

TEST(Svg, AxisMaximumIsRound) {
  EXPECT_DOUBLE_EQ(nice_axis_max(3018), 5000);
  EXPECT_DOUBLE_EQ(nice_axis_max(350), 500);
  EXPECT_DOUBLE_EQ(nice_axis_max(21), 25);
  EXPECT_DOUBLE_EQ(nice_axis_max(0), 1);
}

TEST(Html, IsSelfContained) {
  const std::vector<NodeInput> inputs = {{"base", "", load_compare("baseline.json"), {}},
                                         {"cand", "", load_compare("candidate-hbm-regression.json"), {}}};
  const std::string html = render_report_html(build_report(inputs, nullptr, false));
  for (const char* outside : {"http://", "https://", "src=", "href=", "@import", "url("})
    EXPECT_EQ(html.find(outside), std::string::npos) << outside;
  std::size_t charts = 0;
  for (auto at = html.find("<svg class=\"chart\""); at != std::string::npos; at = html.find("<svg class=\"chart\"", at + 1)) ++charts;
  EXPECT_EQ(charts, 8u);  // gemm, 4 bandwidth panels, all-reduce curve, storage sweep, uniformity
}
