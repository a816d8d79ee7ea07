// report --fleet over a results folder that holds several runs of one node: the newest run is
// judged and the older ones are listed as left out; --all-runs shows each run as its own row.
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

// results/ collects a file per run: the fleet report judges each node's newest run.
TEST(FleetRuns, FleetReportJudgesTheNewestRunOfANodeAndListsTheOlder) {
  TempDir dir;
  const std::string newer = std::regex_replace(read_text(fixture("results/balanced.json")),
                                               std::regex("2025-01-15T10:00:00Z"), "2025-02-01T08:00:00Z");
  dir.write("fixture-node-old.json", read_text(fixture("results/balanced.json")));
  dir.write("fixture-node-new.json", newer);
  dir.write("cpu-only.json", read_text(fixture("results/cpu-only.json")));
  const auto r = run_nodeaudit({"report", "--fleet", dir.path});
  EXPECT_LE(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find(dir.path +
                       "/fixture-node-old.json`: an older run of node fixture-node (started 2025-01-15T10:00:00Z); its "
                       "newest run, " +
                       dir.path + "/fixture-node-new.json (started 2025-02-01T08:00:00Z), is judged"),
            std::string::npos)
      << r.out << r.err;
  const auto all = run_nodeaudit({"report", "--fleet", "--all-runs", dir.path});
  EXPECT_LE(all.exit_code, 1) << all.err;
  EXPECT_NE(all.out.find("fixture-node @ 2025-01-15T10:00:00Z"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("fixture-node @ 2025-02-01T08:00:00Z"), std::string::npos) << all.out;
  expect_one_line_usage_error(run_nodeaudit({"report", "--all-runs", fixture("results/balanced.json")}),
                              "--all-runs: applies only with --fleet");
}

}  // namespace
}  // namespace nodeaudit
