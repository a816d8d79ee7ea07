// compare: pairing, the noise-aware verdict and environment differences, on recorded fixtures whose
// one difference from the baseline is known (tests/fixtures/compare/make_fixtures.py).
#include <cmath>

#include <gtest/gtest.h>

#include "harness/report/compare.hpp"
#include "tests/harness/report/fixture_util.hpp"

using namespace nodeaudit;
using namespace nodeaudit::report;
using nodeaudit::test::load_compare;

namespace {

Comparison compare_with(const std::string& candidate, CompareOptions options = {}) {
  return compare_results(load_compare("baseline.json"), load_compare(candidate), options);
}

const MetricChange* find_change(const Comparison& c, const std::string& display) {
  for (const auto& m : c.metrics)
    if (display_name(m.baseline) == display) return &m;
  return nullptr;
}

MetricRecord record(double median, double lo, double hi, bool higher_is_better = true) {
  MetricRecord r;
  r.probe = "p";
  r.name = "m";
  r.unit = "GB/s";
  r.higher_is_better = higher_is_better;
  r.median = median, r.ci_lo = lo, r.ci_hi = hi;
  return r;
}

}  // namespace

TEST(Compare, UnchangedRunHasNoRegressionAndPairsEveryMetric) {
  const Comparison c = compare_with("candidate-unchanged.json");
  EXPECT_FALSE(c.has_regression());
  EXPECT_EQ(c.metrics.size(), 24u);
  // One run each side, every figure within the 5% tolerance: unchanged, with no borrowed noise floor.
  EXPECT_EQ(c.count(Verdict::inconclusive), 0);
  EXPECT_EQ(c.count(Verdict::unchanged), 24);
  EXPECT_TRUE(c.env.empty());
  EXPECT_TRUE(c.only_in_baseline.empty());
  EXPECT_TRUE(c.only_in_candidate.empty());
}

TEST(Compare, TenPercentHbmDropIsARegressionAndTheUpgradeIsListed) {
  const Comparison c = compare_with("candidate-hbm-regression.json");
  EXPECT_TRUE(c.has_regression());
  EXPECT_EQ(c.count(Verdict::regression), 4);  // 2 GPUs x copy, triad
  const MetricChange* copy0 = find_change(c, "gpu.memory-bandwidth bandwidth [gpu=0, kernel=copy]");
  ASSERT_NE(copy0, nullptr);
  EXPECT_EQ(copy0->verdict, Verdict::regression);
  ASSERT_TRUE(copy0->delta_pct.has_value());
  EXPECT_NEAR(*copy0->delta_pct, -10.0, 1e-9);
  EXPECT_DOUBLE_EQ(copy0->baseline.median, 3000);
  EXPECT_DOUBLE_EQ(copy0->candidate.median, 2700);
  ASSERT_EQ(c.env.size(), 3u);
  EXPECT_EQ(c.env[0].field, "software.driver");
  EXPECT_EQ(c.env[0].baseline, "550.54.15");
  EXPECT_EQ(c.env[0].candidate, "560.35.03");
  EXPECT_EQ(c.env[1].field, "software.cuda_driver");
  EXPECT_EQ(c.env[2].field, "software.cuda_runtime");
}

TEST(Compare, NoisyChangeBeyondToleranceIsNotARegression) {
  const Comparison c = compare_with("candidate-noise.json");
  EXPECT_FALSE(c.has_regression());
  const MetricChange* storage =
      find_change(c, "storage.read bandwidth [block_size=1048576, cache=none, pattern=seq, workers=4]");
  ASSERT_NE(storage, nullptr);
  EXPECT_NEAR(*storage->delta_pct, -8.0, 1e-9);
  EXPECT_FALSE(storage->band.measured) << "one run each side: between-run noise not measured";
  EXPECT_TRUE(storage->intervals_overlap);
  EXPECT_EQ(storage->verdict, Verdict::inconclusive);
  EXPECT_NE(storage->why.find("within-run 95% intervals of the medians overlap; noise between runs not measured: run with "
                              "--rounds 3, or compare several results a side"),
            std::string::npos)
      << storage->why;
  const MetricChange* gemm = find_change(c, "gpu.gemm tflops [dtype=bf16, gpu=0]");
  ASSERT_NE(gemm, nullptr);
  EXPECT_FALSE(gemm->intervals_overlap) << "tight samples 2% apart do not overlap";
  EXPECT_EQ(gemm->verdict, Verdict::unchanged) << "but -2% is within the 5% tolerance";
}

TEST(Compare, FasterAllReduceIsAnImprovement) {
  const Comparison c = compare_with("candidate-improvement.json");
  EXPECT_FALSE(c.has_regression());
  EXPECT_EQ(c.count(Verdict::improvement), 5);  // 4 sizes + busbw_peak
  ASSERT_EQ(c.env.size(), 1u);
  EXPECT_EQ(c.env[0].field, "software.nccl");
}

TEST(Compare, MetricsInOneFileOnlyAreListed) {
  const Comparison c = compare_with("candidate-missing-metric.json");
  ASSERT_EQ(c.only_in_baseline.size(), 1u);
  EXPECT_EQ(display_name(c.only_in_baseline[0]), "gpu.memory-bandwidth bandwidth [gpu=1, kernel=triad]");
  ASSERT_EQ(c.only_in_candidate.size(), 1u);
  EXPECT_EQ(c.only_in_candidate[0].name, "latency_p50");
  EXPECT_EQ(c.metrics.size(), 23u);
  EXPECT_FALSE(c.has_regression());
}

TEST(Compare, ProbeThatCrashedAfterTheUpgradeCountsAsARegression) {
  const Comparison c = compare_with("candidate-probe-crashed.json");
  ASSERT_EQ(c.probes.size(), 1u);
  EXPECT_EQ(c.probes[0].probe, "comm.allreduce");
  EXPECT_EQ(c.probes[0].candidate, "crashed");
  EXPECT_EQ(c.only_in_baseline.size(), 5u);
  EXPECT_TRUE(c.has_regression());
}

TEST(Compare, PerMetricToleranceOverridesTheDefault) {
  CompareOptions loose;
  loose.metric_tolerance_pct["bandwidth"] = 15;
  EXPECT_FALSE(compare_with("candidate-hbm-regression.json", loose).has_regression());
  CompareOptions qualified;
  qualified.metric_tolerance_pct["bandwidth"] = 15;
  qualified.metric_tolerance_pct["gpu.memory-bandwidth:bandwidth"] = 5;  // the probe-qualified key wins
  EXPECT_EQ(compare_with("candidate-hbm-regression.json", qualified).count(Verdict::regression), 4);
}

TEST(CompareMetric, LowerIsBetterTurnsTheDirectionAround) {
  EXPECT_EQ(compare_metric(record(100, 99, 101, false), record(120, 119, 121, false), 5).verdict, Verdict::regression);
  EXPECT_EQ(compare_metric(record(100, 99, 101, false), record(80, 79, 81, false), 5).verdict, Verdict::improvement);
  EXPECT_EQ(compare_metric(record(100, 99, 101, true), record(80, 79, 81, true), 5).verdict, Verdict::regression);
}

TEST(CompareMetric, FromZeroHasNoPercentageButStillCounts) {
  // gpu.memory-integrity errors: 0 before, 3 now.
  const MetricChange change = compare_metric(record(0, 0, 0, false), record(3, 3, 3, false), 5);
  EXPECT_FALSE(change.delta_pct.has_value());
  EXPECT_EQ(change.verdict, Verdict::regression);
  EXPECT_EQ(compare_metric(record(0, 0, 0, false), record(0, 0, 0, false), 5).verdict, Verdict::unchanged);
}

TEST(CompareMetric, WithoutRoundsTheIntervalsMustAlsoBeApart) {
  // -11% is beyond the tolerance, but with the intervals overlapping and no measured noise the
  // change is neither called nor passed as unchanged.
  const MetricChange overlapping = compare_metric(record(100, 95, 105), record(89, 80, 95), 5);
  EXPECT_EQ(overlapping.verdict, Verdict::inconclusive);
  EXPECT_NE(overlapping.why.find("overlap"), std::string::npos) << overlapping.why;
}

TEST(CompareMetric, WithRoundsAChangeBeyondTheBandMustAlsoLeaveTheIntervals) {
  // A latency read from histogram buckets: both rounds of each run in one bucket (spread 0, band 0),
  // +5.9% between the buckets, while the repetitions inside the runs overlap.
  MetricRecord baseline = record(4423.68, 4227.072, 4489.216, false);
  baseline.round_medians = {4423.68, 4423.68};
  MetricRecord candidate = record(4685.824, 4489.216, 4751.36, false);
  candidate.round_medians = {4685.824, 4685.824};
  const MetricChange overlapping = compare_metric(baseline, candidate, 5);
  EXPECT_TRUE(overlapping.band.measured);
  EXPECT_EQ(overlapping.band.width_pct(), 0);
  EXPECT_EQ(overlapping.verdict, Verdict::inconclusive);
  EXPECT_NE(overlapping.why.find("95% intervals of the two medians overlap"), std::string::npos) << overlapping.why;
  // The same change with the intervals apart is called.
  candidate.ci_lo = 4500;
  EXPECT_EQ(compare_metric(baseline, candidate, 5).verdict, Verdict::regression);
}

TEST(CompareMetric, TouchingIntervalsOverlap) {
  EXPECT_EQ(compare_metric(record(100, 95, 105), record(89, 80, 95), 5).verdict, Verdict::inconclusive);
  const MetricChange apart = compare_metric(record(100, 95, 105), record(89, 80, 94.9), 5);
  EXPECT_EQ(apart.verdict, Verdict::regression);
  EXPECT_EQ(verdict_text(apart), "regression (within-run 95% intervals apart; noise between runs not measured)");
}

TEST(CompareMetric, DifferentUnitsAreNotCompared) {
  MetricRecord other = record(50, 49, 51);
  other.unit = "IOPS";
  EXPECT_EQ(compare_metric(record(100, 99, 101), other, 5).verdict, Verdict::incomparable);
}
