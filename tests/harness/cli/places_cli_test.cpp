// Places that cannot be used, named for what they are: a directory given as a profile, --out under
// a file, report DIR without --fleet, watch --duration shorter than the default interval, and a bad
// --data-dir under run, refused before the first probe with the line `probe` gives.
#include "tests/support/cli_expect.hpp"
#include "tests/support/fixtures.hpp"

namespace nodeaudit {
namespace {

using proc::expect_one_line_usage_error;
using proc::run_nodeaudit;
using test_files::fixture;
using test_files::TempDir;
namespace fs = std::filesystem;

TEST(Places, ThoseThatCannotBeUsedAreNamedForWhatTheyAre) {
  TempDir dir;
  const std::string file = dir.write("afile", "x");
  expect_one_line_usage_error(run_nodeaudit({"score", fixture("results/balanced.json"), "--profile", dir.path + "/"}),
                              "profile '" + dir.path + "/': is a directory");
  expect_one_line_usage_error(run_nodeaudit({"run", "--only", "host.config", "--out", file + "/x.json"}),
                              "--out " + file + "/x.json: " + file + " is a file, not a directory");
  expect_one_line_usage_error(run_nodeaudit({"report", fixture("results")}),
                              fixture("results") + ": is a directory; give result files, or --fleet");
  const auto watch = run_nodeaudit({"watch", "--duration", "100ms"});
  expect_one_line_usage_error(watch,
                              "--duration 100ms: is shorter than the time between samples (--interval 1s by default)");
}

// What `probe storage.read --data-dir X` says is what `run` says, before its first probe.
TEST(Places, RunRefusesABadDataDirBeforeTheFirstProbe) {
  TempDir dir;
  const std::string out = dir.path + "/result.json";
  const auto probe = run_nodeaudit({"probe", "storage.read", "--data-dir", "/proc"});
  ASSERT_EQ(probe.exit_code, 2) << probe.out << probe.err;
  const auto run = run_nodeaudit({"run", "--only", "host.config,storage.read", "--data-dir", "/proc", "--out", out});
  expect_one_line_usage_error(run, "storage.read: ");
  EXPECT_EQ(run.err, probe.err);
  EXPECT_EQ(run.out.find("[1/"), std::string::npos) << "no probe ran: " << run.out;
  EXPECT_FALSE(fs::exists(out)) << "no result file for a run that did not start";
}

}  // namespace
}  // namespace nodeaudit
