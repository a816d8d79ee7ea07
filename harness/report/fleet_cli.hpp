// `nodeaudit report --fleet`: the options' parsing and the run (read, judge, write), so the CLI
// file only declares the options and prints.
#pragma once

#include <string>
#include <vector>

#include "harness/report/fleet_judge.hpp"

namespace nodeaudit::report {

struct FleetOptionText {
  std::string outlier_mad, outlier_floor, gpu_below_best;  // empty: the default
  bool fail_on_drift = false;
  bool all_runs = false;
};
// Throws UsageError naming the option, the bad value and what is accepted.
FleetOptions parse_fleet_options(const FleetOptionText& text);

struct FleetRun {
  std::string markdown;
  bool any_node_failed = false;
};
// Refuses existing output files before reading anything; writes --md/--html atomically.
FleetRun run_fleet(const std::vector<std::string>& inputs, const FleetOptions& options, const std::string& md,
                   const std::string& html);

}  // namespace nodeaudit::report
