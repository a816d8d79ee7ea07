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
                "is wider than the 5% tolerance, so this node cannot tell a 5% change in this figure from its noise"),
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
  EXPECT_NE(xml.find("<skipped message=\"inconclusive: "),
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
  EXPECT_EQ(verdict_text(decode), "regression (within-run 95% intervals apart; noise between runs not measured)");
  EXPECT_TRUE(c.has_regression());
  EXPECT_NE(render_compare_markdown(c).find("| regression (within-run 95% intervals apart; noise between runs not measured) |"),
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

TEST(NoiseBand, BandIsTheNinetyNinePercentIntervalOfTheDifferenceOfMeansFromThePooledScatter) {
  // By hand: baseline {100, 101, 99}: mean 100, squares about it 2; candidate {50, 60, 55}: mean 55,
  // squares 50. Pooled sd sqrt(52 / 4) = 3.6056 over 4 degrees of freedom; t(0.995, 4) = 4.6041 (tables);
  // sqrt(1/3 + 1/3) = 0.8165: half-width 13.554, over the baseline mean 100: 13.55%.
  const NoiseBand band = noise_band({100, 101, 99}, {50, 60, 55}, "bandwidth");
  EXPECT_NEAR(band.width_pct(), 4.6041 * std::sqrt(13.0) * std::sqrt(2.0 / 3.0), 1e-3);
  // Two rounds a side, the quick level: {100, 102} and {101, 103}: squares 2 + 2, df 2, sd sqrt(2),
  // t(0.995, 2) = 9.9248, sqrt(1/2 + 1/2) = 1: 14.036 over the mean 101.
  const NoiseBand two = noise_band({100, 102}, {101, 103}, "bandwidth");
  EXPECT_NEAR(two.width_pct(), 9.9248 * std::sqrt(2.0) / 101 * 100, 1e-3);
  // One side without rounds: only the other's scatter, df 1 (t 63.657), and its one run counts in sqrt(1/1 + 1/2).
  const NoiseBand one = noise_band({100}, {101, 103}, "bandwidth");
  EXPECT_NEAR(one.width_pct(), 63.657 * std::sqrt(2.0) * std::sqrt(1.5) / 100 * 100, 1e-2);
  EXPECT_NE(band.statistic.find("99% t-interval of the difference of means, 3 + 3 runs"), std::string::npos) << band.statistic;
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
  // Rounds 100/101 against 108/109: means 100.5 and 108.5, +7.96%. By hand: squares 0.5 + 0.5, df 2,
  // sd 0.7071, t 9.9248: the band is 7.018 / 100.5 = 6.98% for a median-like figure and 10.48% for a
  // tail. The same move is called for the median-like figure; for the tail the band is wider than the
  // 5% tolerance and holds the change, so it is inconclusive.
  MetricRecord base{};
  base.probe = "storage.read", base.name = "latency_p99", base.unit = "us", base.higher_is_better = false;
  base.round_medians = {100, 101};
  base.median = 100.5, base.ci_lo = 99.5, base.ci_hi = 101.5;
  MetricRecord cand = base;
  cand.round_medians = {108, 109};
  cand.median = 108.5, cand.ci_lo = 107.5, cand.ci_hi = 109.5;
  const MetricChange tail = compare_metric(base, cand, 5);
  EXPECT_NEAR(tail.band.width_pct(), 1.5 * 9.9248 * std::sqrt(0.5) / 100.5 * 100, 1e-3);
  EXPECT_EQ(tail.verdict, Verdict::inconclusive) << tail.why;
  base.name = cand.name = "latency_p50";
  const MetricChange centre = compare_metric(base, cand, 5);
  EXPECT_NEAR(centre.band.width_pct(), 9.9248 * std::sqrt(0.5) / 100.5 * 100, 1e-3);
  EXPECT_EQ(centre.verdict, Verdict::regression) << centre.why;
  EXPECT_EQ(verdict_text(centre), "regression (99% t-interval of the difference of means)");
}

TEST(CompareRounds, AChangeInsideTheToleranceNeverFailsTheGate) {
  // Twenty runs a side, one of them 6% off: the range (6.2%) exceeds the 5% tolerance, but the band
  // (about 1.1%: sd about 1.3, t(0.995, 38) = 2.71, sqrt(1/20 + 1/20)) is well inside it, and a real -3%
  // change leaves the band but not the tolerance: unchanged, as the tolerance promises. The rule before
  // sent such a change, with its spread above the tolerance, on to be called a regression.
  MetricRecord base{};
  base.probe = "host.decode", base.name = "images_per_s", base.unit = "images/s", base.higher_is_better = true;
  for (int i = 0; i < 19; ++i) base.round_medians.push_back(i % 2 ? 100.2 : 99.8);
  base.round_medians.push_back(106);
  base.median = 100, base.ci_lo = 99.9, base.ci_hi = 100.1;
  MetricRecord cand = base;
  for (double& r : cand.round_medians) r *= 0.97;
  cand.median = 97, cand.ci_lo = 96.9, cand.ci_hi = 97.1;
  const MetricChange change = compare_metric(base, cand, 5);
  EXPECT_GT(change.band.spread_pct, 5.0);
  EXPECT_LT(change.band.width_pct(), 1.5);
  EXPECT_EQ(change.verdict, Verdict::unchanged) << change.why;
  // The same runs against a 2% tolerance: beyond it and the band, intervals apart: a regression.
  EXPECT_EQ(compare_metric(base, cand, 2).verdict, Verdict::regression);
  // A spread wider than the tolerance with a change inside the tolerance: inconclusive, never a regression.
  base.round_medians = {100, 112, 88};
  cand.round_medians = {97, 109, 85};
  EXPECT_EQ(compare_metric(base, cand, 5).verdict, Verdict::inconclusive);
}
