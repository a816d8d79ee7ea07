// This node's earlier runs as the baseline: the result files in a results folder that were measured
// on the same host as the candidate. Their scatter between runs is the noise compare judges a change
// against (noise_band.hpp), and the more of them, the smaller the change a compare can call.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/report/compare.hpp"

namespace nodeaudit::report {

// The host a result was measured on (env.host.hostname), "unknown host" when it does not say.
std::string host_of(const nlohmann::json& doc);

// The results in `dir` (its *.json files that are nodeaudit results; others are passed over) measured
// on `host`, oldest first by their start time, leaving out the file `except_path` (the candidate
// itself). Throws UsageError naming `option` and `dir` when it is not a folder, or when it holds no
// run of `host` (then it names the hosts it does hold).
std::vector<LabelledResult> load_history(const std::string& option, const std::string& dir, const std::string& host,
                                         const std::string& except_path);

// run's closing line: how many earlier runs of this host the folder of `out_path` holds, and per
// probe of `doc` the smallest change of its first figure a compare of a run like this one against them
// could call.
std::string history_line(const nlohmann::json& doc, const std::string& out_path);

// The smallest change of a figure a compare of one new run against `history_runs` earlier runs can
// call, as a percentage, from the scatter of the figure over those runs (noise_band.hpp's rule);
// infinite when fewer than two earlier runs hold it.
double smallest_callable_change_pct(const std::vector<double>& history_runs);

}  // namespace nodeaudit::report
