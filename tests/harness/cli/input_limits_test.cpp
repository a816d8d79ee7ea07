// Inputs the user names, end to end through the binary: a number out of range in a result or a
// profile, a device, a FIFO or an oversized file instead of a result, and `-` for standard input:
// each refusal one line `nodeaudit: ...` naming the file, the field or the limit, exit 2.
#include <sys/stat.h>

#include <chrono>
#include <regex>

#include "tests/support/cli_expect.hpp"
#include "tests/support/fixtures.hpp"

namespace nodeaudit {
namespace {

using proc::expect_one_line_usage_error;
using proc::run_nodeaudit;
using test_files::fixture;
using test_files::read_text;
using test_files::TempDir;
namespace fs = std::filesystem;

// balanced.json with its first metric median replaced by `number`.
std::string result_with_median(const TempDir& dir, const std::string& number) {
  const std::string text =
      std::regex_replace(read_text(fixture("results/balanced.json")), std::regex(R"("median": [0-9.]+)"),
                         "\"median\": " + number, std::regex_constants::format_first_only);
  return dir.write("overflow.json", text);
}

TEST(InputLimits, ANumberOutOfRangeInAResultIsOneLineNamingFileAndField) {
  TempDir dir;
  const std::string bad = result_with_median(dir, "1e999");
  const std::string field = "field probes[].metrics[].median holds a number out of range";
  expect_one_line_usage_error(run_nodeaudit({"score", bad, "--profile", "llm-finetune-7b"}), bad + ": " + field);
  expect_one_line_usage_error(run_nodeaudit({"compare", fixture("results/balanced.json"), bad}), bad + ": " + field);
  expect_one_line_usage_error(run_nodeaudit({"report", fixture("results/balanced.json"), bad}), bad + ": " + field);
  const auto fleet = run_nodeaudit({"report", "--fleet", fixture("results/cpu-only.json"), bad});
  EXPECT_NE(fleet.out.find(field), std::string::npos) << "listed as a skipped input: " << fleet.out << fleet.err;
}

TEST(InputLimits, AProfileNumberOutOfRangeIsRefusedNamingTheFieldAndRange) {
  TempDir dir;
  std::string text = read_text(fixture("profiles/balance-test.toml"));
  text = std::regex_replace(text, std::regex("parameters = 1e9"), "parameters = 1e308");
  const std::string profile = dir.write("huge.toml", text);
  const auto r = run_nodeaudit({"score", fixture("results/balanced.json"), "--profile", profile});
  expect_one_line_usage_error(r, "'parameters' in [model] is 1e+308; accepted: above 0 to 1e+15");
  EXPECT_EQ(r.out, "") << "nothing assessed";
}

TEST(InputLimits, DevicesAndFifosAreRefusedAtOnce) {
  TempDir dir;
  const std::string fifo = dir.path + "/pipe.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  expect_one_line_usage_error(run_nodeaudit({"report", "/dev/zero"}),
                              "/dev/zero: is a character device; nodeaudit reads only regular files");
  expect_one_line_usage_error(run_nodeaudit({"score", "/dev/urandom", "--profile", "llm-finetune-7b"}),
                              "/dev/urandom: is a character device");
  expect_one_line_usage_error(run_nodeaudit({"compare", fixture("results/balanced.json"), fifo}), fifo + ": is a FIFO");
  expect_one_line_usage_error(run_nodeaudit({"score", fixture("results/balanced.json"), "--profile", "/dev/zero"}),
                              "profile '/dev/zero': is a character device");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30.0);
}

TEST(InputLimits, AFileLargerThanTheLimitIsRefusedSayingTheLimit) {
  TempDir dir;
  const std::string big = dir.path + "/big.json";
  std::ofstream(big) << "{";
  fs::resize_file(big, 300ull << 20);  // sparse: no disk used
  expect_one_line_usage_error(run_nodeaudit({"score", big, "--profile", "llm-finetune-7b"}),
                              big + ": is 300 MiB; nodeaudit reads at most 256 MiB here");
}

TEST(InputLimits, DashReadsTheResultFromStandardInput) {
  const std::string command = std::string(NODEAUDIT_BINARY) + " score - --profile llm-finetune-7b --format json < " +
                              fixture("results/balanced.json");
  const auto piped = proc::run_process({"/bin/sh", "-c", command});
  const auto direct =
      run_nodeaudit({"score", fixture("results/balanced.json"), "--profile", "llm-finetune-7b", "--format", "json"});
  EXPECT_LE(piped.exit_code, 1) << piped.err;
  EXPECT_EQ(piped.exit_code, direct.exit_code) << piped.err;
  EXPECT_EQ(piped.out, direct.out);
  const auto endless = proc::run_process({"/bin/sh", "-c", std::string(NODEAUDIT_BINARY) + " report - < /dev/zero"});
  expect_one_line_usage_error(endless, "standard input: holds more than 256 MiB");
}

}  // namespace
}  // namespace nodeaudit
