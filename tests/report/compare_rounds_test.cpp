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

TEST(CompareRounds, OneRunEachSideSaysTheNoiseIsUnknownAndNamesTheFloor) {
  const Comparison c = compare_rounds({"single-round-candidate-drop.json"}, "single-round-candidate-drop.json");
  const MetricChange& decode = change_of(c, "host.decode");
  EXPECT_FALSE(decode.band.measured);
  EXPECT_NE(decode.band.source.find("between-run noise unknown"), std::string::npos) << decode.band.source;
  EXPECT_DOUBLE_EQ(decode.band.spread_pct, noise_floor("host.decode", "images_per_s").spread_pct);
  EXPECT_NE(render_compare_markdown(c).find("## Between-run noise unknown"), std::string::npos);
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
  const NoiseBand band = noise_band({100, 101, 99}, {50, 60, 55}, "p", "m");
  EXPECT_TRUE(band.measured);
  EXPECT_NEAR(band.spread_pct, 10.0 / 55.0 * 100.0, 1e-9);
}
