// Rounds: the interleaved order and how the entries of one probe's rounds become one entry.
#include <gtest/gtest.h>

#include "harness/core/context.hpp"
#include "harness/core/result.hpp"
#include "harness/core/rounds.hpp"

using namespace nodeaudit;

namespace {

nlohmann::json round_entry(const std::vector<double>& samples, const std::string& status = "ok") {
  Metric m{"bandwidth", "GB/s", Better::higher, {{"kernel", "triad"}}, samples};
  Outcome outcome{status == "ok" ? Status::ok : parse_status(status), status == "ok" ? "" : "it broke"};
  return probe_entry({.id = "host.memory-bandwidth", .outcome = outcome, .duration_s = 2.0, .metrics = {m}});
}

}  // namespace

TEST(RoundOrder, EachRoundRotatesThePlanSoNoProbeIsAlwaysFirst) {
  EXPECT_EQ(round_order(3, 0), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(round_order(3, 1), (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(round_order(3, 2), (std::vector<std::size_t>{2, 0, 1}));
  EXPECT_EQ(round_order(3, 3), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_TRUE(round_order(0, 1).empty());
}

TEST(MergeRounds, PoolsTheSamplesAndKeepsEachRoundsMedian) {
  const nlohmann::json merged =
      merge_rounds({round_entry({10, 11, 12}), round_entry({20, 21, 22}), round_entry({30, 31, 32})}, 3);
  EXPECT_EQ(merged["status"], "ok");
  EXPECT_EQ(merged["rounds"], 3);
  EXPECT_DOUBLE_EQ(merged["duration_s"].get<double>(), 6.0);
  ASSERT_EQ(merged["metrics"].size(), 1u);
  const nlohmann::json& m = merged["metrics"][0];
  EXPECT_EQ(m["n"], 9);
  EXPECT_EQ(m["round_medians"], (std::vector<double>{11, 21, 31}));
  EXPECT_DOUBLE_EQ(m["median"].get<double>(), 21);
  nlohmann::json doc = new_result_document("standard", "", {"nodeaudit"}, {{"host", nlohmann::json::object()}});
  doc["probes"].push_back(merged);
  EXPECT_TRUE(validate_result(doc).empty()) << validate_result(doc).front();
}

TEST(MergeRounds, OneRoundIsLeftAsItIs) {
  const nlohmann::json one = round_entry({1, 2, 3});
  EXPECT_EQ(merge_rounds({one}, 1), one);
}

TEST(MergeRounds, ARoundThatFailedSetsTheStatusAndSaysWhichRound) {
  const nlohmann::json merged = merge_rounds({round_entry({1, 2, 3}), round_entry({}, "crashed")}, 3);
  EXPECT_EQ(merged["status"], "crashed");
  EXPECT_EQ(merged["reason"], "round 2 of 3: it broke");
}

TEST(MergeRounds, FewerRoundsThanPlannedWithoutAFailureWereInterrupted) {
  const nlohmann::json merged = merge_rounds({round_entry({1, 2, 3})}, 3);
  EXPECT_EQ(merged["status"], "interrupted");
  EXPECT_EQ(merged["reason"], "interrupted after 1 of 3 rounds");
}

TEST(MergeRounds, OneDisturbedRoundMarksTheProbeWithTheWorstRoundsEvidence) {
  nlohmann::json calm = round_entry({1, 2, 3}), loaded = round_entry({1, 2, 3});
  calm["disturbance"] = {{"disturbed", false}, {"cpu_foreign_share_pct", 1.0}};
  loaded["disturbance"] = {{"disturbed", true}, {"cpu_foreign_share_pct", 40.0}, {"evidence", "a hog"}};
  const nlohmann::json merged = merge_rounds({calm, loaded, calm}, 3);
  EXPECT_TRUE(merged["disturbed"].get<bool>());
  EXPECT_EQ(merged["disturbance"]["evidence"], "a hog");
  EXPECT_EQ(merged["disturbance"]["rounds_disturbed"], 1);
  EXPECT_EQ(merged["disturbance"]["rounds_judged"], 3);
}

TEST(MergeRounds, TheSameFindingInEveryRoundIsReportedOnceAndOthersAreKept) {
  auto with_findings = [](const std::vector<std::pair<std::string, std::string>>& code_messages) {
    nlohmann::json entry = round_entry({1, 2, 3});
    for (const auto& [code, message] : code_messages)
      entry["findings"].push_back({{"code", code}, {"severity", "fail"}, {"message", message}});
    return entry;
  };
  const nlohmann::json merged = merge_rounds(
      {with_findings({{"host_fabric.slow_host", "h3: 0.00594 GB/s (median of its 2 pairs), 878.3x below the 5.22 GB/s median"}}),
       with_findings({{"host_fabric.slow_host", "h3: 0.00599 GB/s (median of its 2 pairs), 12.5x below the 0.0751 GB/s median"},
                      {"host_fabric.slow_host", "h2: 0.00601 GB/s (median of its 2 pairs), 12.5x below the 0.0751 GB/s median"}})},
      2);
  ASSERT_EQ(merged["findings"].size(), 2u) << merged["findings"].dump(2);
  EXPECT_EQ(merged["findings"][0]["message"].get<std::string>().substr(0, 13), "h3: 0.00594 G");
  EXPECT_EQ(merged["findings"][1]["message"].get<std::string>().substr(0, 4), "h2: ");
}

// A figure that one round prints as a whole number ("4 GB/s", three significant digits of 4.00) is a
// figure all the same; a whole number that names something (GPU 0, GPU 1) still tells findings apart.
TEST(MergeRounds, AWholeNumberWithAUnitIsAFigureAndOtherWholeNumbersNameThings) {
  auto with_findings = [](const std::vector<std::string>& messages) {
    nlohmann::json entry = round_entry({1, 2, 3});
    for (const auto& message : messages) entry["findings"].push_back({{"code", "c"}, {"severity", "fail"}, {"message", message}});
    return entry;
  };
  const nlohmann::json merged = merge_rounds(
      {with_findings({"h3: 0.00605 GB/s, 660.4x below the 4 GB/s median", "GPU 0: 12% below the others"}),
       with_findings({"h3: 0.00605 GB/s, 725.9x below the 4.39 GB/s median", "GPU 1: 12% below the others", "GPU 0: 9% below the others"})},
      2);
  ASSERT_EQ(merged["findings"].size(), 3u) << merged["findings"].dump(2);
  EXPECT_NE(merged["findings"][0]["message"].get<std::string>().find("4 GB/s"), std::string::npos) << "the first round's words";
  EXPECT_EQ(merged["findings"][2]["message"], "GPU 1: 12% below the others");
}

namespace {

ProbeContext round_context(int rounds_sharing, int round_index, std::optional<int> repetitions = std::nullopt) {
  RunSettings settings;
  settings.rounds_sharing_budget = rounds_sharing;
  settings.round_index = round_index;
  settings.repetitions = repetitions;
  return ProbeContext(ParamValues{}, settings, nullptr, std::chrono::steady_clock::now() + std::chrono::hours(1));
}

}  // namespace

TEST(RoundShare, TheRoundsSplitACountAndItsPartsCoverItOnce) {
  for (int rounds : {1, 2, 3, 7}) {
    for (std::int64_t whole : {1, 5, 300, 2000, 2001}) {
      std::int64_t covered = 0;
      for (int r = 0; r < rounds; ++r) {
        const ProbeContext ctx = round_context(rounds, r);
        EXPECT_EQ(ctx.round_share_start(whole), std::min(covered, whole - 1)) << whole << " over " << rounds << ", round " << r;
        const std::int64_t share = ctx.round_share(whole, 0);
        EXPECT_LE(share, whole / rounds + 1);
        EXPECT_GE(share, whole / rounds);
        covered += share;
      }
      EXPECT_EQ(covered, whole) << whole << " over " << rounds;
    }
  }
  EXPECT_EQ(round_context(2, 1).round_share(1, 1), 1) << "never below at_least";
  EXPECT_DOUBLE_EQ(round_context(2, 0).round_share_s(3.0), 1.5);
}

TEST(RoundShare, TheQuickPolicyIsSplitAndRepetitionsGivenAreATotal) {
  const RepeatPolicy whole = default_policy(Level::quick);
  const RepeatPolicy first = round_context(2, 0).policy(), second = round_context(2, 1).policy();
  EXPECT_EQ(first.min_repetitions + second.min_repetitions, whole.min_repetitions);  // 3 + 2
  EXPECT_DOUBLE_EQ(first.budget_s + second.budget_s, whole.budget_s);
  EXPECT_EQ(first.warmup, whole.warmup) << "each round is a process of its own and warms up";
  EXPECT_EQ(round_context(3, 2).policy().min_repetitions, 2) << "a round's median is never one repetition";
  EXPECT_EQ(round_context(2, 0, 5).policy().max_repetitions + round_context(2, 1, 5).policy().max_repetitions, 5);
  EXPECT_EQ(round_context(1, 0, 5).policy().min_repetitions, 5);
}
