// `nodeaudit compare` and `nodeaudit report` end to end: real processes, real files. Exit codes
// 0/1/2, one-line errors for bad inputs, output files written once and never overwritten.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/cli_process.hpp"

namespace fs = std::filesystem;
using nodeaudit::proc::files_in;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::ProcessResult;
using nodeaudit::proc::run_process;

namespace {

std::string fixture(const std::string& name) { return std::string(NODEAUDIT_FIXTURES) + "/compare/" + name; }
std::string result(const std::string& name) { return std::string(NODEAUDIT_FIXTURES) + "/results/" + name; }

ProcessResult compare(const std::string& candidate, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {NODEAUDIT_BINARY, "compare", fixture("baseline.json"), fixture(candidate)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_process(argv);
}

void expect_one_line_error(const ProcessResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_EQ(r.err.rfind("nodeaudit: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

class CompareCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("compare"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

}  // namespace

TEST_F(CompareCli, ExitCodeSaysWhetherAnythingRegressed) {
  EXPECT_EQ(compare("candidate-unchanged.json").exit_code, 0);
  EXPECT_EQ(compare("candidate-noise.json").exit_code, 0);
  EXPECT_EQ(compare("candidate-improvement.json").exit_code, 0);
  EXPECT_EQ(compare("candidate-missing-metric.json").exit_code, 0);
  const ProcessResult regressed = compare("candidate-hbm-regression.json");
  EXPECT_EQ(regressed.exit_code, 1) << regressed.err;
  EXPECT_NE(regressed.out.find("| software.driver | 550.54.15 | 560.35.03 |"), std::string::npos) << regressed.out;
  EXPECT_EQ(compare("candidate-hbm-regression.json", {"--tolerance", "12%"}).exit_code, 0);
  EXPECT_EQ(compare("candidate-hbm-regression.json", {"--metric-tolerance", "gpu.memory-bandwidth:bandwidth=12"}).exit_code, 0);
}

TEST_F(CompareCli, JunitAndMarkdownFilesAreWrittenOnceAndNeverOverwritten) {
  const std::string junit = dir_ + "/compare.xml", md = dir_ + "/compare.md";
  const ProcessResult first = compare("candidate-hbm-regression.json", {"--junit", junit, "--md", md});
  ASSERT_EQ(first.exit_code, 1) << first.err;
  std::ifstream in(junit);
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(xml.find("failures=\"4\""), std::string::npos) << xml;
  EXPECT_EQ(files_in(dir_).size(), 2u);
  // The Markdown exists now: refused before anything is written, the JUnit file included.
  fs::remove(junit);
  expect_one_line_error(compare("candidate-hbm-regression.json", {"--junit", junit, "--md", md}), "never overwrites");
  EXPECT_FALSE(fs::exists(junit));
}

TEST_F(CompareCli, BadInputsExitTwoWithOneLine) {
  expect_one_line_error(compare("schema-v2.json"), "has schema \"nodeaudit.result/2\"; this nodeaudit reads only \"nodeaudit.result/1\"");
  expect_one_line_error(compare("empty.json"), "is empty");
  expect_one_line_error(compare("truncated.json"), "truncated or corrupt");
  expect_one_line_error(compare("corrupt.json"), "truncated or corrupt");
  expect_one_line_error(compare("not-nodeaudit.json"), "is not a nodeaudit result");
  expect_one_line_error(compare("no-such-file.json"), "cannot be read");
  expect_one_line_error(compare("candidate-unchanged.json", {"--tolerance", "five"}), "--tolerance five");
  expect_one_line_error(compare("candidate-unchanged.json", {"--metric-tolerance", "bandwidth"}), "expected KEY=VALUE");
  expect_one_line_error(compare("candidate-unchanged.json", {"--tolerance", "150%"}), "--tolerance 150%: expected a percentage from 0 to 100");
  expect_one_line_error(compare("candidate-unchanged.json", {"--metric-tolerance", "no_such_figure=5"}),
                        "--metric-tolerance no_such_figure: no figure of that name in these results");
}

// A quick run recorded on a real node with one round (no measured between-run spread), and the same
// result with every figure 20% worse (make_scaled_fixture.py): the gate fails, and says the noise
// of this node was not measured; the result compared with itself is unchanged in every figure.
TEST_F(CompareCli, OneRunEachSideATwentyPercentDropFailsTheGateAndAFileAgainstItselfIsUnchanged) {
  const ProcessResult drop = run_process({NODEAUDIT_BINARY, "compare", fixture("recorded-one-round.json"),
                                          fixture("recorded-one-round-20pct-worse.json")});
  EXPECT_EQ(drop.exit_code, 1) << drop.out << drop.err;
  EXPECT_NE(drop.out.find("| regression (within-run 95% intervals apart; noise between runs not measured) |"), std::string::npos)
      << drop.out;
  const ProcessResult same =
      run_process({NODEAUDIT_BINARY, "compare", fixture("recorded-one-round.json"), fixture("recorded-one-round.json")});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  std::ifstream in(fixture("recorded-one-round.json"));
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::size_t figures = 0;
  for (const auto& probe : doc["probes"]) figures += probe.value("metrics", nlohmann::json::array()).size();
  ASSERT_GT(figures, 0u);
  EXPECT_NE(same.out.find(", " + std::to_string(figures) + " unchanged, 0 inconclusive"), std::string::npos) << same.out;
}

TEST_F(CompareCli, ReportWritesMarkdownAndHtmlWithTheCheapestNode) {
  const std::string md = dir_ + "/report.md", html = dir_ + "/report.html";
  const ProcessResult r = run_process({NODEAUDIT_BINARY, "report", result("balanced.json"), result("storage-starved.json"), "--name",
                                       "balanced=vendor-a", "--name", "storage-starved.json=vendor-b", "--price", "vendor-a=12.5",
                                       "--price", "vendor-b=10", "--profile", std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml",
                                       "--md", md, "--html", html, "--redact"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Cheapest effective run: **vendor-"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("fixture-node"), std::string::npos) << "--redact keeps the hostname out";
  EXPECT_TRUE(fs::exists(md));
  EXPECT_TRUE(fs::exists(html));
  std::ifstream in(html);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("fixture-node"), std::string::npos);
  EXPECT_EQ(text.find("GPU-fixture-0"), std::string::npos);
  EXPECT_NE(text.find("vendor-b"), std::string::npos);
}

// Two CPU-side nodes compared for the GPUs they will get: both documents say the GPU side is the
// table's, and each node's bottleneck is its own measured host.
TEST_F(CompareCli, ReportForTargetGpusLabelsTheDatasheetSideInMarkdownAndHtml) {
  const std::string md = dir_ + "/target.md", html = dir_ + "/target.html";
  const ProcessResult r = run_process({NODEAUDIT_BINARY, "report", result("cpu-only.json"), result("gpu-skipped.json"),
                                       "--profile", "cv-resnet50-imagenet", "--target-gpus", "h100x8", "--md", md,
                                       "--html", html});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& path : {md, html}) {
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("Judged for 8 x H100 SXM5 80 GB (HGX, NVLink 4) (--target-gpus h100x8)"), std::string::npos)
        << path;
    EXPECT_NE(text.find("come from the built-in GPU table, not measured on these nodes: each a published measurement (another node) or a datasheet peak"), std::string::npos) << path;
    EXPECT_NE(text.find("cpu_decode: 300 images/s per GPU of 7,100 needed"), std::string::npos) << path;
  }
  expect_one_line_error(run_process({NODEAUDIT_BINARY, "report", result("cpu-only.json"), "--target-gpus", "h100x8"}),
                        "needs --profile");
}

TEST_F(CompareCli, ReportRefusesNamesAndPricesThatMatchNothing) {
  const std::string a = result("balanced.json"), b = result("cpu-starved.json");
  expect_one_line_error(run_process({NODEAUDIT_BINARY, "report", a, b, "--price", "vendor-z=3", "--profile", "llm-finetune-7b"}),
                        "names no node; the nodes are: balanced, cpu-starved");
  expect_one_line_error(run_process({NODEAUDIT_BINARY, "report", a, b, "--name", "nothing=x"}), "matches no result");
  expect_one_line_error(run_process({NODEAUDIT_BINARY, "report", a, b, "--price", "balanced=3"}), "needs --profile");
  expect_one_line_error(run_process({NODEAUDIT_BINARY, "report", a, a}), "given to two results");
  expect_one_line_error(run_process({NODEAUDIT_BINARY, "report", a, fixture("truncated.json")}), "truncated or corrupt");
}

// compare with run-to-run noise: several baselines, inconclusive and disturbed figures never exit 1.
TEST_F(CompareCli, RoundsAndSeveralBaselinesGateOnlyOnChangesBeyondTheNoise) {
  const ProcessResult regressed = run_process({NODEAUDIT_BINARY, "compare", fixture("rounds-baseline.json"),
                                               fixture("rounds-baseline-b.json"), fixture("rounds-candidate-drop.json")});
  EXPECT_EQ(regressed.exit_code, 1) << regressed.err;
  EXPECT_NE(regressed.out.find("## Inconclusive"), std::string::npos) << regressed.out;
  EXPECT_NE(regressed.out.find("is wider than the 5% tolerance"), std::string::npos) << regressed.out;
  const ProcessResult disturbed =
      run_process({NODEAUDIT_BINARY, "compare", fixture("rounds-baseline.json"), fixture("rounds-candidate-disturbed.json")});
  EXPECT_EQ(disturbed.exit_code, 0) << disturbed.err;
  EXPECT_NE(disturbed.out.find("candidate disturbed"), std::string::npos) << disturbed.out;
  const std::string junit = dir_ + "/rounds.xml";
  const ProcessResult only_noise = run_process({NODEAUDIT_BINARY, "compare", fixture("rounds-baseline.json"),
                                                fixture("rounds-candidate-drop.json"), "--junit", junit});
  EXPECT_EQ(only_noise.exit_code, 1) << only_noise.err;
  std::ifstream in(junit);
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(xml.find("<skipped message=\"inconclusive: "), std::string::npos) << xml;
  // The same file on both sides: every figure unchanged, noisy ones included.
  const ProcessResult itself =
      run_process({NODEAUDIT_BINARY, "compare", fixture("rounds-baseline.json"), fixture("rounds-baseline.json")});
  EXPECT_EQ(itself.exit_code, 0) << itself.err;
  EXPECT_NE(itself.out.find("0 regressed, 0 improved, 3 unchanged, 0 inconclusive"), std::string::npos) << itself.out;
}

TEST_F(CompareCli, OneFileIsNotAComparison) {
  const ProcessResult r = run_process({NODEAUDIT_BINARY, "compare", fixture("rounds-baseline.json")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}
