// The scorecard the vendor report opens with: one row per resource the scorer divides by, each
// figure with its unit, its ratio to the best node and its status (measured, datasheet, not
// measured: why); the full figures below it grouped per probe; mixed results named.
#include <gtest/gtest.h>

#include "harness/report/provenance.hpp"
#include "harness/report/report_details.hpp"
#include "harness/report/report_html.hpp"
#include "harness/report/report_markdown.hpp"
#include "harness/report/scorecard.hpp"
#include "harness/score/result_view.hpp"
#include "tests/harness/report/fixture_util.hpp"

using namespace nodeaudit;
using namespace nodeaudit::report;
using namespace nodeaudit::test;

namespace {

score::Profile balance_profile() {
  return score::load_profile(std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml");
}

NodeInput node(const std::string& name, const std::string& fixture, std::optional<double> price = {}) {
  return {name, "", load_result_file(results_fixture(fixture)), price};
}

const ScorecardRow& row_of(const Scorecard& card, const std::string& resource) {
  for (const auto& row : card.rows)
    if (row.resource == resource) return row;
  throw std::runtime_error("no scorecard row " + resource);
}

}  // namespace

TEST(Scorecard, OneRowPerResourceWithRatioToTheBestNode) {
  const score::Profile profile = balance_profile();
  const Report report =
      build_report({node("a", "balanced.json", 12.5), node("b", "storage-starved.json", 10.0)}, &profile, false);
  const Scorecard card = build_scorecard(report);
  ASSERT_TRUE(card.assessed);
  std::vector<std::string> resources;
  for (const auto& row : card.rows) resources.push_back(row.resource);
  EXPECT_EQ(resources, (std::vector<std::string>{"compute", "gpu_memory", "gpu_memory_bandwidth", "host_to_device",
                                                 "communication", "storage", "cpu_decode", "host_ram"}));
  const ScorecardRow& storage = row_of(card, "storage");
  EXPECT_EQ(storage.best, 0);
  ASSERT_TRUE(storage.cells[1].ratio_to_best);
  EXPECT_NEAR(*storage.cells[1].ratio_to_best, 800.0 / 4000.0, 1e-9);
  EXPECT_EQ(storage.cells[1].status, "measured on this node");
  EXPECT_EQ(storage.cells[1].unit, "samples/s");
  EXPECT_EQ(row_of(card, "compute").best, -1) << "both nodes' GEMM is 500 TFLOP/s: a tie singles out no node";
  EXPECT_EQ(cell_figure(row_of(card, "compute").cells[0]), "500 TFLOP/s");
  EXPECT_EQ(cell_figure(row_of(card, "gpu_memory").cells[0]), "37.3 GiB per GPU");
  // The starved node's step: 32 / 800 samples/s x (1 - 0.09 served by the page cache) = 36.4 ms.
  EXPECT_EQ(short_cost(report, 1), "3.16 for 0.316 h (1.49x the cheapest)");
  EXPECT_EQ(short_bottleneck(report.nodes[1]), "storage: 800 MB/s of 1.49 GB/s needed (800 of 1,490 samples/s)");
}

TEST(Scorecard, UnmeasuredFiguresSayWhyAndHaveNoRatio) {
  const score::Profile profile = score::load_profile("cv-resnet50-imagenet");
  const Report report = build_report({node("gpu", "balanced.json"), node("cpu", "cpu-only.json")}, &profile, false);
  const Scorecard card = build_scorecard(report);
  const ScorecardRow& compute = row_of(card, "compute");
  EXPECT_EQ(compute.cells[1].status, "not measured: gpu.gemm skipped");
  EXPECT_FALSE(compute.cells[1].value);
  EXPECT_FALSE(compute.cells[1].ratio_to_best);
  EXPECT_EQ(compute.best, -1) << "one figure is no comparison";
}

TEST(Scorecard, TargetGpusFiguresAreLabelledDatasheet) {
  const score::Profile profile = score::load_profile("cv-resnet50-imagenet");
  const score::TargetGpus target = score::parse_target_gpus("h100x8");
  const Report report =
      build_report({node("a", "cpu-only.json"), node("b", "gpu-skipped.json")}, &profile, false, &target);
  const Scorecard card = build_scorecard(report);
  for (const char* resource : {"compute", "gpu_memory", "host_to_device"})
    for (const auto& cell : row_of(card, resource).cells)
      EXPECT_EQ(cell.status.rfind(score::gpu_table_label, 0), 0u) << resource << ": " << cell.status;
  const std::string md = render_report_markdown(report);
  EXPECT_LT(md.find("## Scorecard"), md.find("## Nodes"));
  EXPECT_NE(md.find("GPU table, not measured on this node"), std::string::npos);
}

TEST(Scorecard, WithoutAProfileTheScorecardSaysWhatItNeeds) {
  const Report report = build_report({node("a", "balanced.json"), node("b", "cpu-only.json")}, nullptr, false);
  EXPECT_FALSE(build_scorecard(report).assessed);
  EXPECT_NE(render_report_markdown(report).find("No `--profile` given: the scorecard needs a workload"),
            std::string::npos);
}

TEST(ReportDetails, EveryFigureOfAnyNodeIsKeptWithTheMissingNodesStatus) {
  const Report report = build_report({node("a", "balanced.json"), node("b", "gpu-skipped.json")}, nullptr, false);
  const std::vector<ProbeGroup> groups = group_details(report);
  ASSERT_FALSE(groups.empty());
  EXPECT_EQ(groups.front().probe, "gpu.gemm");
  EXPECT_EQ(groups.front().node_status[0], "ok");
  EXPECT_EQ(groups.front().node_status[1].rfind("skipped: ", 0), 0u) << groups.front().node_status[1];
  ASSERT_FALSE(groups.front().rows.empty());
  EXPECT_TRUE(groups.front().rows.front().medians[0]);
  EXPECT_FALSE(groups.front().rows.front().medians[1]);
  EXPECT_FALSE(groups.front().meaning.empty());
  const std::string html = render_report_html(report);
  EXPECT_NE(html.find("<details class=\"probe\" id=\"probe-gpu.gemm\">"), std::string::npos);
}

TEST(Provenance, ResultsPlannedForAnotherProfileOrLevelAreNamed) {
  nlohmann::json a = load_result_file(results_fixture("balanced.json"));
  nlohmann::json b = a, c = a;
  b["profile"] = "llm-finetune-7b";
  c["level"] = "quick";
  a["level"] = b["level"] = "standard";
  const auto notes =
      provenance_notes({provenance_of("a", a), provenance_of("b", b), provenance_of("c", c)}, "balance-test");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0],
            "Judged here for `balance-test`; the runs were planned for: `balance-test` (a, c); "
            "`llm-finetune-7b` (b). A run planned for another profile may lack probes this one needs.");
  EXPECT_EQ(notes[1], "Runs at different levels (repetitions and sizes differ): `standard` (a, b); `quick` (c).");
  const score::Profile profile = balance_profile();
  const Report report = build_report({{"a", "", a, {}}, {"b", "", b, {}}}, &profile, false);
  EXPECT_NE(render_report_markdown(report).find("**Mixed results:** Judged here for `balance-test`"),
            std::string::npos);
  EXPECT_TRUE(provenance_notes({provenance_of("a", a), provenance_of("a2", a)}, "balance-test").empty());
}
