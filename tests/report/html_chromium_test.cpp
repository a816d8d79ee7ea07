// The HTML report opened in headless Chromium: the DOM it renders holds every chart with its bars
// and points, the inline marker script ran (data-charts-rendered), and the page logged nothing to
// the console (no script error, no Content-Security-Policy violation from an external resource).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <unistd.h>

#include "cli_process.hpp"

namespace fs = std::filesystem;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::ProcessResult;
using nodeaudit::proc::run_process;

namespace {

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return dir + "/" + program;
  return "";
}

std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

}  // namespace

TEST(HtmlInChromium, ChartsRenderWithNoConsoleErrors) {
  const std::string chromium = find_on_path("chromium");
  if (chromium.empty()) GTEST_SKIP() << "chromium not installed (scripts/install-deps.sh installs it)";
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
    GTEST_SKIP() << "chromium could not start here (exit " << browser.exit_code << "): " << browser.err.substr(0, 300);
  const std::string& dom = browser.out;
  EXPECT_NE(dom.find("data-charts-total=\"8\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_NE(dom.find("data-charts-rendered=\"8\""), std::string::npos) << "every chart has bars or points";
  for (const char* id : {"chart-gemm", "chart-hbm", "chart-pcie", "chart-storage", "chart-busbw", "chart-allreduce",
                         "chart-storage-sweep", "chart-uniformity"})
    EXPECT_NE(dom.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_EQ(occurrences(dom, "<circle class=\"point\""), 2u * 4u + 2u * 5u);  // 2 nodes x (4 sizes + 5 worker counts)
  EXPECT_EQ(browser.err.find(":CONSOLE"), std::string::npos) << browser.err;
}
