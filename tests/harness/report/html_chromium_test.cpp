// The HTML report opened in headless Chromium: the DOM it renders holds every chart with its bars
// and points, the inline marker script ran (data-charts-rendered), and the page logged nothing to
// the console (no script error, no Content-Security-Policy violation from an external resource).
#include <gtest/gtest.h>

#include "tests/support/expect_gate.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <unistd.h>

#include "tests/harness/report/fleet_fixture.hpp"
#include "tests/support/cli_process.hpp"
#include "tests/support/text_search.hpp"

namespace fs = std::filesystem;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::ProcessResult;
using nodeaudit::proc::run_process;

namespace {

using nodeaudit::test::find_on_path;
using nodeaudit::test::occurrences;

// The DOM Chromium renders from `html` (empty when chromium cannot run here: the caller skips).
struct Rendered {
  std::string dom, log, skip_reason;
};
Rendered render_in_chromium(const std::string& html, const std::string& dir) {
  const std::string chromium = find_on_path("chromium");
  if (chromium.empty()) return {"", "", "chromium not installed (scripts/install-deps.sh installs it)"};
  const ProcessResult browser =
      run_process({chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                   "--user-data-dir=" + dir + "/profile", "--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + html});
  if (browser.exit_code != 0 && browser.out.empty())
    return {"", "", "chromium could not start here (exit " + std::to_string(browser.exit_code) + "): " + browser.err.substr(0, 300)};
  return {browser.out, browser.err, ""};
}

}  // namespace

TEST(HtmlInChromium, ChartsRenderWithNoConsoleErrors) {
  const std::string chromium = find_on_path("chromium");
  if (chromium.empty()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_CHROMIUM", "chromium not installed (scripts/install-deps.sh installs it)");
  const std::string dir = make_temp_dir("report-html");
  const std::string html = dir + "/report.html", fixtures = NODEAUDIT_FIXTURES;
  const ProcessResult report = run_process({NODEAUDIT_BINARY, "report", fixtures + "/compare/baseline.json",
                                            fixtures + "/compare/candidate-hbm-regression.json", "--html", html});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const ProcessResult browser =
      run_process({chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                   "--user-data-dir=" + dir + "/profile", "--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + html});
  fs::remove_all(dir);
  if (browser.exit_code != 0 && browser.out.empty())
    SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_CHROMIUM", "chromium could not start here (exit " +
                                                          std::to_string(browser.exit_code) + "): " + browser.err.substr(0, 300));
  const std::string& dom = browser.out;
  EXPECT_NE(dom.find("data-charts-total=\"8\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_NE(dom.find("data-charts-rendered=\"8\""), std::string::npos) << "every chart has bars or points";
  for (const char* id : {"chart-gemm", "chart-hbm", "chart-pcie", "chart-storage", "chart-busbw", "chart-allreduce",
                         "chart-storage-sweep", "chart-uniformity"})
    EXPECT_NE(dom.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_EQ(occurrences(dom, "<circle class=\"point\""), 2u * 4u + 2u * 5u);  // 2 nodes x (4 sizes + 5 worker counts)
  EXPECT_EQ(browser.err.find(":CONSOLE"), std::string::npos) << browser.err;
}

// The vendor report with a profile: the scorecard table comes first, the charts still draw, and the
// full figures are folded, one <details> per probe with its meaning in the summary.
TEST(HtmlInChromium, ScorecardFirstAndFiguresFoldedPerProbe) {
  const std::string dir = make_temp_dir("report-html-scorecard");
  const std::string html = dir + "/report.html", fixtures = NODEAUDIT_FIXTURES;
  const ProcessResult report =
      run_process({NODEAUDIT_BINARY, "report", fixtures + "/results/balanced.json", fixtures + "/results/gpu-skipped.json",
                   "--profile", fixtures + "/profiles/balance-test.toml", "--html", html});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const Rendered page = render_in_chromium(html, dir);
  fs::remove_all(dir);
  if (!page.skip_reason.empty()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_CHROMIUM", page.skip_reason);
  const auto scorecard = page.dom.find("<table class=\"scorecard\">");
  ASSERT_NE(scorecard, std::string::npos) << page.dom.substr(0, 2000);
  EXPECT_LT(scorecard, page.dom.find("<h2>Nodes</h2>"));
  EXPECT_LT(scorecard, page.dom.find("<details"));
  // balanced.json has 7 probes; gpu-skipped.json adds none the first lacks.
  EXPECT_EQ(occurrences(page.dom, "<details class=\"probe\""), 7u);
  EXPECT_EQ(occurrences(page.dom, "<summary>"), 7u);
  EXPECT_EQ(occurrences(page.dom, "<details class=\"probe\" id=\"probe-gpu.gemm\" open"), 0u) << "folded by default";
  EXPECT_NE(page.dom.find("data-charts-rendered=\""), std::string::npos);
  EXPECT_NE(page.dom.find("not measured: gpu.gemm skipped"), std::string::npos);
  EXPECT_EQ(page.log.find(":CONSOLE"), std::string::npos) << page.log;
}

// The fleet report's HTML: the verdict, then the figures folded per probe, with no console error.
TEST(HtmlInChromium, FleetReportFoldsItsFiguresPerProbe) {
  const std::string dir = make_temp_dir("fleet-html");
  nodeaudit::test::write_generated_fleet(dir, 20);
  const std::string html = dir + "/fleet.html";
  const ProcessResult report = run_process({NODEAUDIT_BINARY, "report", "--fleet", dir, "--html", html});
  ASSERT_EQ(report.exit_code, 1) << report.err;
  const Rendered page = render_in_chromium(html, dir);
  fs::remove_all(dir);
  if (!page.skip_reason.empty()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_CHROMIUM", page.skip_reason);
  EXPECT_NE(page.dom.find("Verdict: FAIL: 2 of 20 nodes fail</h2>"), std::string::npos) << page.dom.substr(0, 2000);
  EXPECT_EQ(occurrences(page.dom, "<details class=\"probe\""), 7u) << "one folded group per probe of balanced.json";
  EXPECT_LT(page.dom.find("Configuration drift"), page.dom.find("<details"));
  EXPECT_EQ(page.log.find(":CONSOLE"), std::string::npos) << page.log;
}
