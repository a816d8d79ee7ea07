// Reading a fleet's results: each argument a result file or a directory (its *.json files, not
// recursive, in name order). A file that is not a readable nodeaudit.result/1 document is skipped
// with its reason and counted, never fatal while one result is left. A node audited more than once
// (results/ collects a file per run) is judged on its newest run (latest started_at), and the older
// runs are listed as left out; with `all_runs` each run is a row of its own, "host @ started_at",
// to show drift over time. Documents are read one at a time and dropped once summarized.
#pragma once

#include <string>
#include <vector>

#include "harness/report/fleet_model.hpp"

namespace nodeaudit::report {

// Throws UsageError when no result is left, or two files hold the same node and start time.
FleetInput load_fleet(const std::vector<std::string>& arguments, bool all_runs = false);

}  // namespace nodeaudit::report
