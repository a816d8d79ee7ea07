// With a directory --out, nodeaudit names the result file itself: a name another run took in the
// same second becomes the next free numbered name; no run overwrites or loses another's result.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "harness/core/result.hpp"
#include "harness/node/env.hpp"
#include "tests/support/cli_expect.hpp"

namespace fs = std::filesystem;
using nodeaudit::proc::files_in;
using nodeaudit::proc::make_temp_dir;
using nodeaudit::proc::run_process;

namespace {

// "<host>-<UTC second>.json", the name a run started at `t` chooses.
std::string result_name_at(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  return nodeaudit::host_name() + "-" + stamp + ".json";
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

// Another run's results for every second from now to two minutes on (far longer than a start-up
// takes, even under a sanitizer): whichever second this run starts in, its first name is taken.
TEST(OutName, ADirectoryOutTakesTheNextFreeNameWhenAnotherRunHoldsIt) {
  const std::string dir = make_temp_dir("outname");
  const std::time_t now = std::time(nullptr);
  std::set<std::string> theirs;
  for (std::time_t t = now - 1; t <= now + 120; ++t) {
    theirs.insert(result_name_at(t));
    std::ofstream(dir + "/" + result_name_at(t)) << "another run's result";
  }
  const auto r = run_process({NODEAUDIT_TESTBIN, "run", "--only", "test.ok", "--out", dir + "/"});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  std::vector<std::string> ours;
  for (const auto& path : files_in(dir)) {
    const std::string name = fs::path(path).filename().string();
    if (theirs.count(name)) EXPECT_EQ(read_all(path), "another run's result") << name << " was overwritten";
    else ours.push_back(path);
  }
  ASSERT_EQ(ours.size(), 1u) << "one new result file expected\n" << r.err;
  EXPECT_NE(ours[0].find("-2.json"), std::string::npos) << ours[0];
  EXPECT_NO_THROW(nodeaudit::load_result_file(ours[0]));
  EXPECT_NE(r.out.find("result written to " + ours[0]), std::string::npos) << r.out;
  fs::remove_all(dir);
}

// Two runs into one directory at the same moment both keep their result.
TEST(OutName, TwoRunsStartedTogetherBothKeepTheirResult) {
  const std::string dir = make_temp_dir("outname-pair");
  std::vector<std::string> args = {NODEAUDIT_TESTBIN, "run", "--only", "test.ok", "--out", dir};
  nodeaudit::proc::ProcessResult second;
  std::thread other([&] { second = run_process(args); });
  const auto first = run_process(args);
  other.join();
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(files_in(dir).size(), 2u);
  fs::remove_all(dir);
}
