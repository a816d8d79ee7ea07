// compare with run-to-run noise: the band from rounds and several baselines, inconclusive figures,
// disturbed runs, on recorded fixtures (tests/fixtures/compare/make_rounds_fixtures.py).
#include <gtest/gtest.h>

#include "fixture_util.hpp"
#include "report/compare.hpp"
#include "report/compare_render.hpp"

using namespace nodeaudit;
using namespace nodeaudit::report;
using nodeaudit::test::load_compare;

namespace {

LabelledResult labelled(const std::string& name) {
  return {name, load_compare(name)};
}

Comparison compare_rounds(const std::vector<std::string>& baselines, const std::string& candidate) {
  std::vector<LabelledResult> docs;
  for (const auto& name : baselines) docs.push_back(labelled(name));
  return compare_results(docs, labelled(candidate), {});
}

const MetricChange& change_of(const Comparison& c, const std::string& probe) {
  for (const auto& m : c.metrics)
    if (m.baseline.probe == probe) return m;
  ADD_FAILURE() << "no metric of " << probe;
  static const MetricChange none;
  return none;
}

}  // namespace

TEST(CompareRounds, StableMetricWithARealTenPercentDropIsARegression) {
  const Comparison c = compare_rounds({"rounds-baseline.json"}, "rounds-candidate-drop.json");
  const MetricChange& decode = change_of(c, "host.decode");
  EXPECT_EQ(decode.verdict, Verdict::regression) << decode.why;
  ASSERT_TRUE(decode.delta_pct);
  EXPECT_NEAR(*decode.delta_pct, -10.0, 1e-9);
  EXPECT_TRUE(decode.band.measured);
  EXPECT_NEAR(decode.band.spread_pct, 0.7, 1e-9);  // (1005 - 998) / 1000
  EXPECT_EQ(change_of(c, "host.memory-bandwidth").verdict, Verdict::unchanged);
  EXPECT_TRUE(c.has_regression());
}

TEST(CompareRounds, MetricWhoseRoundsSpreadTwentyPercentIsInconclusiveWithBothNumbers) {
  const Comparison c = compare_rounds({"rounds-baseline.json"}, "rounds-candidate-drop.json");
  const MetricChange& dataset = change_of(c, "storage.dataset");
  EXPECT_EQ(dataset.verdict, Verdict::inconclusive);
  EXPECT_NEAR(dataset.band.spread_pct, 20.0, 1e-9);
  EXPECT_NE(dataset.why.find(
                "run-to-run spread 20% exceeds the 5% tolerance: this node cannot resolve a 5% change in this figure"),
            std::string::npos)
      << dataset.why;
  EXPECT_EQ(c.count(Verdict::inconclusive), 1);
  const std::string md = render_compare_markdown(c);
  EXPECT_NE(md.find("## Inconclusive"), std::string::npos) << md;
  EXPECT_NE(md.find("1 inconclusive"), std::string::npos) << md;
}

TEST(CompareRounds, DisturbedCandidateCallsNoRegressionAndSaysWhichSideAndHowMuch) {
  const Comparison c = compare_rounds({"rounds-baseline.json"}, "rounds-candidate-disturbed.json");
  const MetricChange& decode = change_of(c, "host.decode");
  EXPECT_EQ(decode.verdict, Verdict::disturbed);
  EXPECT_NE(decode.why.find("candidate disturbed"), std::string::npos) << decode.why;
  EXPECT_NE(decode.why.find("48% of the 2 CPUs"), std::string::npos) << decode.why;
  EXPECT_NE(decode.why.find("-15.0%"), std::string::npos) << decode.why;
  EXPECT_FALSE(c.has_regression());
  const std::string xml = render_compare_junit(c);
  EXPECT_NE(xml.find("<skipped message=\"disturbed: not judged: candidate disturbed"), std::string::npos) << xml;
}

TEST(CompareRounds, InconclusiveIsSkippedInJunitNotPassed) {
  const std::string xml = render_compare_junit(compare_rounds({"rounds-baseline.json"}, "rounds-candidate-drop.json"));
  EXPECT_NE(xml.find("<skipped message=\"inconclusive: run-to-run spread 20% exceeds the 5% tolerance"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("failures=\"1\" errors=\"0\" skipped=\"1\""), std::string::npos) << xml;
}

TEST(CompareRounds, SingleRoundCandidateTakesTheBandFromTheBaselinesRounds) {
  const Comparison c = compare_rounds({"rounds-baseline.json"}, "single-round-candidate-drop.json");
  const MetricChange& decode = change_of(c, "host.decode");
  EXPECT_EQ(decode.verdict, Verdict::regression) << decode.why;
  EXPECT_EQ(decode.band.source, "baseline 3 runs 0.7%, candidate 1 run");
  EXPECT_EQ(change_of(c, "storage.dataset").verdict, Verdict::inconclusive);
}

TEST(CompareRounds, AFileComparedWithItselfIsUnchangedEverywhere) {
  for (const char* name : {"single-round-candidate-drop.json", "rounds-baseline.json", "rounds-candidate-disturbed.json"}) {
    const Comparison c = compare_rounds({name}, name);
    ASSERT_FALSE(c.metrics.empty()) << name;
    EXPECT_EQ(c.count(Verdict::unchanged), static_cast<int>(c.metrics.size())) << name;
    EXPECT_FALSE(c.has_regression()) << name;
  }
}

TEST(CompareRounds, OneRunEachSideSaysTheNoiseWasNotMeasuredAndBorrowsNoFloor) {
  const Comparison c = compare_rounds({"single-round-candidate-drop.json"}, "single-round-candidate-drop.json");
  const MetricChange& decode = change_of(c, "host.decode");
  EXPECT_FALSE(decode.band.measured);
  EXPECT_EQ(decode.band.source, "noise not measured on this node (one run each side, no rounds)");
  EXPECT_DOUBLE_EQ(decode.band.spread_pct, 0.0);
  EXPECT_NE(render_compare_markdown(c).find("## Noise not measured on this node"), std::string::npos);
}

TEST(CompareRounds, OneRunEachSideABeyondToleranceDropWithIntervalsApartFailsTheGate) {
  // The baseline's single-round figures scaled by 0.8: intervals far apart, no rounds on either side.
  const nlohmann::json base = load_compare("single-round-candidate-drop.json");
  nlohmann::json slower = base;
  for (auto& probe : slower["probes"])
    for (auto& m : probe["metrics"]) {
      for (const char* key : {"median", "mean", "min", "max", "p5", "p95"}) m[key] = m[key].get<double>() * 0.8;
      m["ci95"] = {m["ci95"][0].get<double>() * 0.8, m["ci95"][1].get<double>() * 0.8};
      for (auto& sample : m["samples"]) sample = sample.get<double>() * 0.8;
    }
  const Comparison c = compare_results({LabelledResult{"a.json", base}}, LabelledResult{"b.json", slower}, {});
  const MetricChange& decode = change_of(c, "host.decode");
  EXPECT_EQ(decode.verdict, Verdict::regression) << decode.why;
  EXPECT_EQ(verdict_text(decode), "regression (noise not measured on this node: confirm with --rounds 3)");
  EXPECT_TRUE(c.has_regression());
  EXPECT_NE(render_compare_markdown(c).find("| regression (noise not measured on this node: confirm with --rounds 3) |"),
            std::string::npos);
}

TEST(CompareRounds, SeveralBaselinesPoolTheirRunsAndNameMetricsNotInEveryBaseline) {
  const Comparison c = compare_rounds({"rounds-baseline.json", "rounds-baseline-b.json"}, "rounds-candidate-drop.json");
  const MetricChange& decode = change_of(c, "host.decode");
  EXPECT_EQ(decode.baseline_runs.size(), 6u);
  EXPECT_EQ(decode.verdict, Verdict::regression);
  // storage.dataset ran with another sample size in the second baseline: a series of its own there.
  const MetricChange& dataset = change_of(c, "storage.dataset");
  EXPECT_EQ(dataset.baseline_runs.size(), 3u);
  ASSERT_EQ(dataset.missing_from.size(), 1u);
  EXPECT_EQ(dataset.missing_from[0], "rounds-baseline-b.json");
  EXPECT_NE(render_compare_markdown(c).find("not in baseline rounds-baseline-b.json (probe or params differ)"),
            std::string::npos);
}

TEST(CompareRounds, AnotherHostIsTheFirstEnvironmentDifference) {
  const Comparison c = compare_rounds({"rounds-baseline.json"}, "rounds-other-host.json");
  ASSERT_FALSE(c.env.empty());
  EXPECT_EQ(c.env[0].field, "host.hostname");
  const Comparison mixed =
      compare_rounds({"rounds-baseline.json", "rounds-other-host.json"}, "rounds-candidate-drop.json");
  ASSERT_FALSE(mixed.between_baselines.empty());
  EXPECT_EQ(mixed.between_baselines[0].field, "rounds-other-host.json: host.hostname");
  EXPECT_NE(render_compare_markdown(mixed).find("## Differences between the baselines"), std::string::npos);
}

TEST(NoiseBand, SpreadIsTheRelativeRangeOfTheWiderSide) {
  EXPECT_DOUBLE_EQ(relative_spread_pct(std::vector<double>{100, 110, 90}), 20.0);
  EXPECT_DOUBLE_EQ(relative_spread_pct(std::vector<double>{100}), 0.0);
  const NoiseBand band = noise_band({100, 101, 99}, {50, 60, 55}, "bandwidth");
  EXPECT_TRUE(band.measured);
  EXPECT_NEAR(band.spread_pct, 10.0 / 55.0 * 100.0, 1e-9);
  EXPECT_NEAR(band.width_pct(), 2 * 10.0 / 55.0 * 100.0, 1e-9);
}

TEST(NoiseBand, TailFiguresTakeThreeTimesTheirSpread) {
  for (const char* tail : {"latency_p99", "p999_us", "latency_p95", "latency_max", "step_time_max_s"})
    EXPECT_TRUE(is_tail_figure(tail)) << tail;
  for (const char* centre : {"bandwidth", "latency_p50", "images_per_s", "pcie_gen_max", "memory_peak_max", "p9x"})
    EXPECT_FALSE(is_tail_figure(centre)) << centre;
  const NoiseBand band = noise_band({100, 110}, {105, 100}, "latency_p99");
  EXPECT_DOUBLE_EQ(band.multiple, 3.0);
  EXPECT_NEAR(band.width_pct(), 3 * 10.0 / 105.0 * 100.0, 1e-9);
}

TEST(CompareRounds, ATailMovingLessThanThreeTimesItsSpreadIsNotARegression) {
  // Baseline p99 rounds 100/109.2 (9.2% spread): +18.9% is beyond twice the spread, inside three times.
  MetricRecord base{};
  base.probe = "storage.read", base.name = "latency_p99", base.unit = "us", base.higher_is_better = false;
  base.round_medians = {100, 109.2};
  base.median = 104.6, base.ci_lo = 100, base.ci_hi = 109.2;
  MetricRecord cand = base;
  cand.round_medians = {124.0, 124.7};
  cand.median = 124.35, cand.ci_lo = 124.0, cand.ci_hi = 124.7;
  const MetricChange tail = compare_metric(base, cand, 5);
  EXPECT_EQ(tail.verdict, Verdict::inconclusive) << tail.why;
  base.name = cand.name = "latency_p50";
  EXPECT_EQ(compare_metric(base, cand, 5).verdict, Verdict::regression);
}
