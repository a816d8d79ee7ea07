// compare with run-to-run noise: the band from rounds and several baselines, inconclusive figures,
// disturbed runs, on recorded fixtures (tests/fixtures/compare/make_rounds_fixtures.py).
#include <cmath>

#include <gtest/gtest.h>

#include "harness/report/compare.hpp"
#include "harness/report/compare_render.hpp"
#include "tests/harness/report/fixture_util.hpp"

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
}

TEST(NoiseBand, BandIsTheNinetyNinePercentIntervalOfTheDifferenceFromThePooledScatter) {
  // By hand: baseline {100, 101, 99}: sd 1, median 100 -> 1%; candidate {50, 60, 55}: sd 5, median 55
  // -> 9.0909%. Pooled over 2 + 2 degrees of freedom: sqrt((2 x 1 + 2 x 82.645) / 4) = 6.4676%;
  // t(0.995, 4) = 4.604; sqrt(1/3 + 1/3) = 0.8165: band 24.31%.
  const NoiseBand band = noise_band({100, 101, 99}, {50, 60, 55}, "bandwidth");
  const double pooled = std::sqrt((2 * 1.0 + 2 * std::pow(500.0 / 55.0, 2)) / 4);
  EXPECT_NEAR(band.width_pct(), 4.604 * pooled * std::sqrt(2.0 / 3.0), 1e-9);
  // Two rounds a side, the quick level: {100, 102} and {101, 103}: each sd sqrt(2) around medians 101
  // and 102; df 2, t 9.925, sqrt(1/2 + 1/2) = 1.
  const NoiseBand two = noise_band({100, 102}, {101, 103}, "bandwidth");
  const double s_base = std::sqrt(2.0) / 101 * 100, s_cand = std::sqrt(2.0) / 102 * 100;
  EXPECT_NEAR(two.width_pct(), 9.925 * std::sqrt((s_base * s_base + s_cand * s_cand) / 2), 1e-9);
  // One side without rounds: only the other's scatter, df 1, and its one run counts in sqrt(1/1 + 1/2).
  const NoiseBand one = noise_band({100}, {101, 103}, "bandwidth");
  EXPECT_NEAR(one.width_pct(), 63.657 * s_cand * std::sqrt(1.5), 1e-9);
  EXPECT_DOUBLE_EQ(t_quantile_99(30), 2.750);
  EXPECT_DOUBLE_EQ(t_quantile_99(200), 2.576);
}

TEST(NoiseBand, TailFiguresTakeHalfAsMuchAgain) {
  for (const char* tail : {"latency_p99", "p999_us", "latency_p95", "latency_max", "step_time_max_s"})
    EXPECT_TRUE(is_tail_figure(tail)) << tail;
  for (const char* centre : {"bandwidth", "latency_p50", "images_per_s", "pcie_gen_max", "memory_peak_max", "p9x"})
    EXPECT_FALSE(is_tail_figure(centre)) << centre;
  const NoiseBand tail = noise_band({100, 110}, {105, 100}, "latency_p99");
  const NoiseBand centre = noise_band({100, 110}, {105, 100}, "latency_p50");
  EXPECT_TRUE(tail.tail);
  EXPECT_NEAR(tail.width_pct(), 1.5 * centre.width_pct(), 1e-9);
}

TEST(CompareRounds, ATailNeedsHalfAsMuchAgainAsAMedianLikeFigure) {
  // Rounds 100/101 against 108/109 (+8.0%): by hand the band is 6.73% for a median-like figure
  // (pooled sd 0.678%, t 9.925 at df 2) and 10.1% for a tail: the same move is called for one only.
  MetricRecord base{};
  base.probe = "storage.read", base.name = "latency_p99", base.unit = "us", base.higher_is_better = false;
  base.round_medians = {100, 101};
  base.median = 100.5, base.ci_lo = 99.5, base.ci_hi = 101.5;
  MetricRecord cand = base;
  cand.round_medians = {108, 109};
  cand.median = 108.5, cand.ci_lo = 107.5, cand.ci_hi = 109.5;
  const MetricChange tail = compare_metric(base, cand, 5);
  EXPECT_NEAR(tail.band.width_pct(), 10.1, 0.05);
  EXPECT_EQ(tail.verdict, Verdict::unchanged) << tail.why;
  EXPECT_NE(tail.why.find("inside the noise band"), std::string::npos) << tail.why;
  base.name = cand.name = "latency_p50";
  const MetricChange centre = compare_metric(base, cand, 5);
  EXPECT_NEAR(centre.band.width_pct(), 6.73, 0.05);
  EXPECT_EQ(centre.verdict, Verdict::regression) << centre.why;
}
