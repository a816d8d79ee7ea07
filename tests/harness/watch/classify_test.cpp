// The watch classifier on recorded series (tests/fixtures/watch): each pattern gives its finding
// with the evidence, and the others stay quiet.
#include <gtest/gtest.h>

#include "harness/core/result.hpp"
#include "harness/watch/classify.hpp"
#include "harness/watch/watch_document.hpp"
#include "tests/support/fixtures.hpp"

using namespace nodeaudit;
using namespace nodeaudit::watch;

namespace {

WatchSeries load_fixture(const std::string& name) {
  return series_from_json(test_files::fixture_json("watch/" + name), test_files::fixture("watch/" + name));
}

std::vector<std::string> warning_codes(const Diagnosis& d) {
  std::vector<std::string> codes;
  for (const auto& f : d.findings)
    if (f.severity != Severity::info) codes.push_back(f.code + (f.gpu >= 0 ? "@" + std::to_string(f.gpu) : ""));
  return codes;
}

const Metric* find_metric(const Diagnosis& d, const std::string& name, const std::string& gpu) {
  for (const auto& m : d.metrics)
    if (m.name == name && m.labels.count("gpu") && m.labels.at("gpu") == gpu) return &m;
  return nullptr;
}

}  // namespace

TEST(WatchClassifier, HealthySteadyUtilizationRaisesNoWarning) {
  const Diagnosis d = diagnose(load_fixture("healthy.json"));
  EXPECT_TRUE(warning_codes(d).empty()) << ::testing::PrintToString(warning_codes(d));
  for (int gpu : {0, 1}) {
    const WatchFinding* f = find_code(d, "watch.utilization_healthy", gpu);
    ASSERT_NE(f, nullptr) << gpu;
    EXPECT_NEAR(f->evidence["mean_util_pct"].get<double>(), 85, 2);
    EXPECT_GT(f->evidence["time_at_or_above_70_pct"].get<double>(), 95);
  }
  const Metric* util = find_metric(d, "gpu_util", "0");
  ASSERT_NE(util, nullptr);
  EXPECT_EQ(util->samples.size(), 120u);
  EXPECT_NE(d.summary.find("No sign of idle time"), std::string::npos) << d.summary;
}

TEST(WatchClassifier, SawtoothGivesTheDataLoaderPeriod) {
  const Diagnosis d = diagnose(load_fixture("sawtooth.json"));
  const WatchFinding* f = find_code(d, "watch.sawtooth", 0);
  ASSERT_NE(f, nullptr) << ::testing::PrintToString(warning_codes(d));
  EXPECT_NEAR(f->evidence["period_s"].get<double>(), 4.0, 0.4);  // within 10%
  EXPECT_GE(f->evidence["drops"].get<int>(), 13);               // 60 s / 4 s, minus the first
  EXPECT_NEAR(f->evidence["near_zero_time_pct"].get<double>(), 25, 6);
  EXPECT_NE(f->action.find("DataLoader workers"), std::string::npos);
  const Metric* period = find_metric(d, "sawtooth_period", "0");
  ASSERT_NE(period, nullptr);
  EXPECT_NEAR(period->samples.at(0), 4.0, 0.4);
  EXPECT_FALSE(has_code(d, "watch.memory_full_idle"));
  EXPECT_NE(d.summary.find("First: Feed the GPU faster"), std::string::npos) << d.summary;
}

TEST(WatchClassifier, MemoryFullAtLowUtilizationPointsAtBatchAndSplit) {
  const Diagnosis d = diagnose(load_fixture("memory-full.json"));
  const WatchFinding* f = find_code(d, "watch.memory_full_idle", 0);
  ASSERT_NE(f, nullptr) << ::testing::PrintToString(warning_codes(d));
  EXPECT_NEAR(f->evidence["memory_used_pct"].get<double>(), 97.5, 0.1);
  EXPECT_NEAR(f->evidence["mean_util_pct"].get<double>(), 30, 3);
  EXPECT_NE(f->action.find("batch size"), std::string::npos);
  EXPECT_TRUE(has_code(d, "watch.utilization_low", 0));
  EXPECT_FALSE(has_code(d, "watch.sawtooth"));
  EXPECT_FALSE(has_code(d, "watch.input_starved")) << "no host cause: full memory is the explanation";
  EXPECT_FALSE(has_code(d, "watch.oversized"));
}

TEST(WatchClassifier, LowPowerWithBusyCpuBlamesPreprocessing) {
  const Diagnosis d = diagnose(load_fixture("low-power-cpu.json"));
  const WatchFinding* f = find_code(d, "watch.input_starved", 0);
  ASSERT_NE(f, nullptr) << ::testing::PrintToString(warning_codes(d));
  EXPECT_GT(f->evidence["low_power_idle_time_pct"].get<double>(), 90);
  EXPECT_GT(f->evidence["host_cpu_busy_pct"].get<double>(), 95);
  EXPECT_EQ(f->evidence["power_reference"], "power limit");
  EXPECT_NEAR(f->evidence["mean_idle_power_w"].get<double>(), 127, 10);
  EXPECT_NE(f->headline.find("CPU preprocessing"), std::string::npos) << f->headline;
  EXPECT_TRUE(has_code(d, "watch.cpu_saturated"));
  EXPECT_FALSE(has_code(d, "watch.sawtooth"));
  EXPECT_FALSE(has_code(d, "watch.memory_full_idle"));
}

TEST(WatchClassifier, IdleNodeIsIdleAndOversized) {
  const Diagnosis d = diagnose(load_fixture("idle.json"));
  EXPECT_TRUE(has_code(d, "watch.gpus_idle"));
  const WatchFinding* f = find_code(d, "watch.oversized");
  ASSERT_NE(f, nullptr) << ::testing::PrintToString(warning_codes(d));
  EXPECT_NEAR(f->evidence["mean_util_pct"].get<double>(), 0, 1e-9);
  EXPECT_LT(f->evidence["mean_memory_used_pct"].get<double>(), 1);
  EXPECT_FALSE(has_code(d, "watch.input_starved")) << "no job to starve";
  EXPECT_FALSE(has_code(d, "watch.sawtooth"));
  EXPECT_FALSE(has_code(d, "watch.throttled")) << "gpu_idle is not throttling";
}

TEST(WatchClassifier, PcieBusyWhileIdleIsACommunicationSign) {
  WatchSeries s = load_fixture("memory-full.json");
  s.gpus[0].memory_total_bytes = 1e12;  // take memory out of the picture
  for (std::size_t i = 0; i < s.size(); ++i) s.columns["gpu0.pcie_rx_bytes_per_s"][i] = i % 2 ? 45e9 : 1e9;
  const Diagnosis d = diagnose(s);
  const WatchFinding* f = find_code(d, "watch.communication_bound", 0);
  ASSERT_NE(f, nullptr) << ::testing::PrintToString(warning_codes(d));
  EXPECT_NEAR(f->evidence["time_pct"].get<double>(), 50, 1);
  EXPECT_NEAR(f->evidence["mean_pcie_gbps"].get<double>(), 45, 0.1);
}

TEST(WatchClassifier, HostOnlySeriesSaysSoAndJudgesTheHost) {
  WatchSeries s = load_fixture("low-power-cpu.json");
  for (auto it = s.columns.begin(); it != s.columns.end();) it = it->first.rfind("gpu", 0) == 0 ? s.columns.erase(it) : std::next(it);
  s.gpus.clear();
  s.gpu_note = "no NVIDIA driver (libnvidia-ml.so.1 could not be loaded)";
  const Diagnosis d = diagnose(s);
  const WatchFinding* f = find_code(d, "watch.no_gpu");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->headline.find("host series only"), std::string::npos);
  EXPECT_TRUE(has_code(d, "watch.cpu_saturated"));
  EXPECT_FALSE(has_code(d, "watch.oversized"));
  EXPECT_NE(d.summary.find("Watched the host only"), std::string::npos) << d.summary;
}

TEST(WatchClassifier, ShortSeriesIsFlagged) {
  WatchSeries s;
  for (int i = 1; i <= 3; ++i) s.append({static_cast<double>(i), {{"cpu_busy_pct", 10.0}}});
  EXPECT_TRUE(has_code(diagnose(s), "watch.short"));
}

TEST(WatchDrops, IrregularDropsAreStallsNotASawtooth) {
  std::vector<double> t, u;
  const int onsets[] = {5, 9, 30, 34, 70, 71};
  for (int i = 0; i < 100; ++i) {
    t.push_back(i);
    bool low = false;
    for (int o : onsets) low = low || i == o;
    u.push_back(low ? 0 : 90);
  }
  const DropAnalysis d = analyse_drops(t, u);
  EXPECT_EQ(d.drops, 5u);  // 70 and 71 are one drop
  EXPECT_FALSE(d.periodic);
  EXPECT_NEAR(d.near_zero_share, 0.06, 1e-9);
}

TEST(WatchDocument, EntryIsSchemaValidAndCarriesTheSeries) {
  const WatchSeries s = load_fixture("sawtooth.json");
  const Diagnosis d = diagnose(s);
  nlohmann::json doc = new_result_document("quick", "", {"nodeaudit", "watch"}, {{"host", nlohmann::json::object()}});
  doc["probes"].push_back(watch_probe_entry(s, d, {60, 0.5, std::nullopt, "interrupted", 30}));
  EXPECT_TRUE(validate_result(doc).empty()) << validate_result(doc).front();
  const auto& entry = doc["probes"][0];
  EXPECT_EQ(entry["status"], "interrupted");
  EXPECT_EQ(entry["info"]["series"]["t_s"].size(), 120u);
  EXPECT_EQ(series_from_json(entry["info"]["series"], "info.series").column("gpu0.util_pct"), s.column("gpu0.util_pct"));
  EXPECT_TRUE(entry["telemetry"]["gpus"][0].contains("util_pct"));
  EXPECT_EQ(entry["findings"].size(), d.findings.size());
}
