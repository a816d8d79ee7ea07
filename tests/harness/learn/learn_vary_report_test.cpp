// `learn --vary`'s report rendered from a recorded result (tests/fixtures/learn/vary-num-workers.json,
// a real run of train_cnn.py over 32 generated JPEGs with the paths shortened), so the rendering is
// deterministic: the Markdown against its golden file (NODEAUDIT_UPDATE_GOLDEN=1 rewrites it; review
// the diff), and the HTML opened in headless Chromium with its inline SVG chart drawn and nothing
// logged to the console (no external resource, no script error).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "harness/learn/optimize_or_upgrade.hpp"
#include "harness/learn/vary.hpp"
#include "tests/support/cli_process.hpp"
#include "tests/support/expect_gate.hpp"
#include "tests/support/text_search.hpp"

namespace nodeaudit::learn::test {
namespace {

using nodeaudit::test::find_on_path;
using nodeaudit::test::occurrences;

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string fixture_dir = std::string(NODEAUDIT_FIXTURES) + "/learn";

struct Recorded {
  VaryReport report;
  std::string command_text;
};

Recorded recorded() {
  const nlohmann::json doc = nlohmann::json::parse(read_text(fixture_dir + "/vary-num-workers.json"));
  for (const auto& entry : doc["probes"])
    if (entry["id"] == "learn.vary") {
      std::string command;
      for (const auto& word : entry["info"]["command"]) command += (command.empty() ? "" : " ") + word.get<std::string>();
      return {vary_report_from_entry(entry), command};
    }
  ADD_FAILURE() << "the fixture holds no learn.vary entry";
  return {};
}

TEST(LearnVaryReport, MarkdownMatchesItsGoldenFile) {
  const Recorded r = recorded();
  const std::string markdown = render_vary_markdown(r.report, r.command_text);
  const std::string golden = fixture_dir + "/vary-num-workers.md";
  if (std::getenv("NODEAUDIT_UPDATE_GOLDEN")) {
    std::ofstream(golden) << markdown;
    GTEST_SKIP() << "rewrote " << golden;
  }
  EXPECT_EQ(markdown, read_text(golden));
}

// The verdict is the change rule (99% t-interval of the difference of means) on the repeats. The
// recorded step times (num_workers=1: 129.0 and 138.7 ms; the baseline 2: 53.7 and 67.4 ms) differ by
// +121% but scatter so much at 2 repeats (pooled sd 8.42 ms, t 9.925) that the interval is +/- 138%:
// no difference, where the old range rule said worse. Three tight repeats a side separate 10%.
TEST(LearnVaryReport, TheVerdictIsTheChangeRuleOnTheRepeats) {
  const VarySetting setting = parse_vary("num_workers=1,2");
  const auto runs_of = [](const std::string& value, const std::vector<double>& steps) {
    std::vector<VaryRun> runs;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      VaryRun r;
      r.value = value, r.repeat = static_cast<int>(i) + 1, r.ok = true, r.step_time_s = steps[i], r.samples_per_s = 8 / steps[i];
      runs.push_back(r);
    }
    return runs;
  };
  std::vector<VaryRun> runs = runs_of("1", {0.12898742199922708, 0.13874730150018877});
  for (auto& r : runs_of("2", {0.05369349050033634, 0.06741557100031059})) runs.push_back(r);
  const VaryReport wide = summarize_vary(setting, 2, runs, "2");
  EXPECT_EQ(find_value(wide, "1")->verdict, "no difference");
  EXPECT_EQ(find_value(wide, "1")->statistic, "99% t-interval of the difference of means, 2 + 2 runs: +121.1% +/- 138.0%");
  runs = runs_of("1", {0.110, 0.111, 0.109});
  for (auto& r : runs_of("2", {0.100, 0.101, 0.099})) runs.push_back(r);
  const VaryReport tight = summarize_vary(setting, 3, runs, "2");
  // By hand: means 110 and 100 ms, s = 1 ms, t(0.995, 4) = 4.604, sqrt(2/3): +/- 3.76% of 100 ms.
  EXPECT_EQ(find_value(tight, "1")->verdict, "worse");
  EXPECT_EQ(find_value(tight, "1")->statistic, "99% t-interval of the difference of means, 3 + 3 runs: +10.0% +/- 3.8%");
  EXPECT_NEAR(find_value(tight, "1")->gain, -0.10, 1e-9);
}

TEST(LearnVaryReport, TheReportRebuiltFromTheResultKeepsEveryRepeat) {
  const Recorded r = recorded();
  ASSERT_EQ(r.report.values.size(), 2u);
  for (const auto& v : r.report.values) {
    EXPECT_EQ(v.step_time_s.size(), 2u) << v.value;
    EXPECT_EQ(spread_of(v.step_time_s).median, v.figure_median) << v.value;
  }
}

// On a GPU node each value's runs carry NVML utilization and peak allocated memory. The recorded run is
// from a node without a GPU, so the figures are set here by hand (a fake device's readings): 60% and
// 80% in the two repeats give a median of 70% with its range, in every view and in the JSON read back.
TEST(LearnVaryReport, GpuUtilizationAndPeakShownPerValueWhenMeasured) {
  Recorded r = recorded();
  ASSERT_FALSE(r.report.values.empty());
  for (auto& v : r.report.values) {
    v.gpu_util_pct = {60, 80};
    v.gpu_peak_bytes = {2.0 * (1ull << 30), 2.0 * (1ull << 30)};
  }
  const std::string terminal = render_vary(r.report, r.command_text);
  const std::string markdown = render_vary_markdown(r.report, r.command_text);
  const std::string html = render_vary_html(r.report, r.command_text);
  EXPECT_NE(terminal.find("GPU util (range), peak"), std::string::npos) << terminal;
  EXPECT_NE(markdown.find("| GPU utilization (range), peak allocated |"), std::string::npos) << markdown;
  EXPECT_NE(html.find("<th>GPU utilization (range), peak allocated</th>"), std::string::npos);
  for (const std::string* view : {&terminal, &markdown, &html})
    EXPECT_EQ(occurrences(*view, "70% (60 to 80), 2 GiB"), r.report.values.size()) << *view;
  const VaryReport back = vary_report_from_entry(vary_probe_entry(r.report, {}, {"python", "train.py"}, {}));
  ASSERT_EQ(back.values.size(), r.report.values.size());
  EXPECT_EQ(back.values[0].gpu_util_pct, (std::vector<double>{60, 80}));
}

TEST(LearnVaryReport, HtmlChartRendersInChromiumWithNoConsoleErrors) {
  const Recorded r = recorded();
  const std::string html = render_vary_html(r.report, r.command_text);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg")) << "no resource from elsewhere";
  EXPECT_EQ(html.find("https://"), std::string::npos);
  const std::string chromium = find_on_path("chromium");
  if (chromium.empty()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_CHROMIUM", "chromium not installed (scripts/install-deps.sh installs it)");
  const std::string dir = proc::make_temp_dir("vary-html");
  std::ofstream(dir + "/vary.html") << html;
  const proc::ProcessResult browser =
      proc::run_process({chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                         "--user-data-dir=" + dir + "/profile", "--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + dir + "/vary.html"});
  fs::remove_all(dir);
  if (browser.exit_code != 0 && browser.out.empty())
    SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_CHROMIUM", "chromium could not start here (exit " + std::to_string(browser.exit_code) + ")");
  const std::string& dom = browser.out;
  ASSERT_NE(dom.find("<svg id=\"vary-chart\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_EQ(occurrences(dom, "<rect class=\"bar\""), 2u) << "one bar per value";
  EXPECT_EQ(occurrences(dom, "<circle class=\"repeat\""), 4u) << "one dot per repeat";
  EXPECT_EQ(occurrences(dom, "<line class=\"range\""), 2u);
  EXPECT_NE(dom.find("<table class=\"vary\">"), std::string::npos);
  EXPECT_EQ(browser.err.find(":CONSOLE"), std::string::npos) << browser.err;
}

// `compare` reads a learn result like any probe result: per value the repeats are the runs (each a
// round median, as vary writes them), so the noise between runs is measured. The candidate is the
// recorded result with value 1's step times halved: by hand, means 0.1339 and 0.0669 s (-50%), pooled
// sd 0.00545 s over 2 degrees of freedom, t 9.925: the band is 40.4%, and -50% leaves it.
TEST(LearnVaryReport, CompareJudgesTwoLearnResultsWithTheNoiseRules) {
  const std::string dir = proc::make_temp_dir("vary-compare");
  nlohmann::json doc = nlohmann::json::parse(read_text(fixture_dir + "/vary-num-workers.json"));
  std::ofstream(dir + "/before.json") << doc.dump(1);
  for (auto& metric : doc["probes"][0]["metrics"])
    if (metric["name"] == "step_time" && metric["labels"]["value"] == "1") {
      for (auto& x : metric["samples"]) x = x.get<double>() / 2;
      for (auto& x : metric["round_medians"]) x = x.get<double>() / 2;
      for (const char* key : {"median", "min", "max", "mean", "p5", "p95", "stdev"})
        if (metric.contains(key)) metric[key] = metric[key].get<double>() / 2;
      for (auto& x : metric["ci95"]) x = x.get<double>() / 2;
    }
  std::ofstream(dir + "/after.json") << doc.dump(1);
  const proc::ProcessResult r = proc::run_process({NODEAUDIT_BINARY, "compare", dir + "/before.json", dir + "/after.json"});
  fs::remove_all(dir);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto row = [&](const std::string& value) {
    const auto at = r.out.find("| learn.vary step_time [setting=num_workers, value=" + value + "] |");
    return at == std::string::npos ? std::string() : r.out.substr(at, r.out.find('\n', at) - at);
  };
  EXPECT_NE(row("1").find("| improvement (99% t-interval of the difference of means) |"), std::string::npos) << r.out;
  EXPECT_NE(row("1").find("-50.0% beyond the 5% tolerance and the 40."), std::string::npos) << r.out;
  EXPECT_NE(row("2").find("| unchanged |"), std::string::npos) << r.out;
}

// The rule of profiles/README.md ([thresholds] upgrade_*: compute above 85%, GPU memory at or above
// 75%, data wait and communication at or below 5%), each figure with where it came from.
TEST(OptimizeOrUpgrade, UpgradeOnlyWhenComputeBoundWithMemoryNearItsLimitAndNoWait) {
  UpgradeInputs in;
  in.compute_share = SourcedFigure{0.92, "measured"};
  in.memory_share = SourcedFigure{0.81, "measured"};
  in.data_wait_share = {0.03, "measured"};
  EXPECT_EQ(optimize_or_upgrade(in), "upgrade is justified — compute 92% (measured), GPU memory 81% (measured), data wait 3% (measured)");
  in.data_wait_share = {0.12, "measured"};
  EXPECT_EQ(optimize_or_upgrade(in).rfind("optimize first: data wait 12% > 5% — ", 0), 0u) << optimize_or_upgrade(in);
  in.data_wait_share = {0.03, "measured"};
  in.memory_share = SourcedFigure{0.60, "measured"};
  EXPECT_EQ(optimize_or_upgrade(in).rfind("optimize first: GPU memory 60% used < 75% — ", 0), 0u) << optimize_or_upgrade(in);
  in.memory_share.reset();
  in.comm_share = SourcedFigure{0.2, "measured"};
  EXPECT_EQ(optimize_or_upgrade(in).rfind("optimize first: GPU memory use not known; communication 20% > 5% — ", 0), 0u) << optimize_or_upgrade(in);
}

TEST(OptimizeOrUpgrade, WithoutAGpuTheComputeSideIsTheTargetsLabelled) {
  LearnedJob job;  // a job learned on a node without a GPU
  job.timing.shares.data_wait = 0.02;
  EXPECT_EQ(optimize_or_upgrade(upgrade_inputs(job, std::nullopt, nlohmann::json::array(), nullptr, "")).rfind("optimize or upgrade: not judged (no GPU on this node", 0), 0u);
  const nlohmann::json assessment = {{"step", {{"gpu_utilization", 0.9}}}, {"memory", {{"peak_share", 0.77}}}};
  EXPECT_EQ(optimize_or_upgrade(upgrade_inputs(job, std::nullopt, nlohmann::json::array(), &assessment, "h100x8")),
            "upgrade is justified — compute 90% (predicted for h100x8 from the GPU table, not measured), GPU memory 77% (predicted for "
            "h100x8 from the GPU table, not measured), data wait 2% (measured: data wait share of the measured steps)");
}

TEST(OptimizeOrUpgrade, OnAGpuComputeIsNvmlUtilizationOrSaysItIsCpuWallClock) {
  LearnedJob job;
  job.gpu = true;
  job.timing.shares.data_wait = 0.02;
  const nlohmann::json gpus = nlohmann::json::array({{{"memory_total_bytes", 80e9}}});
  // NVML said 64%: the compute figure is that, named as NVML's, not 1 - data wait (98%).
  const std::string with_nvml = optimize_or_upgrade(upgrade_inputs(job, 70e9, gpus, nullptr, "", 64.0));
  EXPECT_NE(with_nvml.find("compute 64% (measured: NVML GPU utilization over the measured steps)"), std::string::npos) << with_nvml;
  EXPECT_EQ(with_nvml.rfind("optimize first: compute 64% <= 85%", 0), 0u) << with_nvml;
  // Without NVML samples the step's wall-clock share is all there is, and the line says what it is.
  const std::string without = optimize_or_upgrade(upgrade_inputs(job, 70e9, gpus, nullptr, ""));
  EXPECT_NE(without.find("compute 98% (CPU wall-clock, not GPU"), std::string::npos) << without;
}

TEST(OptimizeOrUpgrade, ADistributedJobWithoutAMeasuredAllReduceIsNotJudgedOnCommunication) {
  LearnedJob job;
  job.gpu = true;
  job.world_size = 8;
  const nlohmann::json gpus = nlohmann::json::array({{{"memory_total_bytes", 80e9}}});
  // Every other figure would justify the upgrade; communication unknown keeps it from being claimed.
  const std::string unknown = optimize_or_upgrade(upgrade_inputs(job, 70e9, gpus, nullptr, "", 95.0));
  EXPECT_EQ(unknown.rfind("optimize first: communication not known — ", 0), 0u) << unknown;
  EXPECT_NE(unknown.find("communication not judged: the job's all-reduce time was not measured"), std::string::npos) << unknown;
  const std::string measured = optimize_or_upgrade(upgrade_inputs(job, 70e9, gpus, nullptr, "", 95.0, 0.03));
  EXPECT_EQ(measured.rfind("upgrade is justified — ", 0), 0u) << measured;
  EXPECT_NE(measured.find("communication 3% (measured: the job's all-reduce time over its step)"), std::string::npos) << measured;
}

}  // namespace
}  // namespace nodeaudit::learn::test
