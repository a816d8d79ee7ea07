// `compare --confirm`: before a regression fails the gate, the probes of the figures it would call
// regressed run again on this node, and a regression stands only where the re-run is called
// regressed against the same baselines too. One run a side cannot tell a slow run from a slow
// node; a second, independent run of just those probes can, at the cost of those probes' time.
#pragma once

#include <vector>

#include "harness/report/compare.hpp"

namespace nodeaudit::cli {

// Throws UsageError (one line, exit 2) when the candidate was not measured on this host or was not
// written by `nodeaudit run` (only a run's probes can be run again).
void check_confirmable(const report::LabelledResult& candidate);

// Re-runs the regressed figures' probes, compares the re-run with `baselines`, and turns each
// regression the re-run does not repeat into `inconclusive`, saying so in its why.
void confirm_regressions(report::Comparison& comparison, const std::vector<report::LabelledResult>& baselines,
                         const report::LabelledResult& candidate, const report::CompareOptions& options);

}  // namespace nodeaudit::cli
