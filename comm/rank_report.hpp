// What rank 0 of a self-launched job hands back to the probe that launched it: its metrics,
// findings, info and outcome, as one JSON file written atomically. Other ranks write nothing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metric.hpp"
#include "probe.hpp"

namespace nodeaudit::comm {

struct RankReport {
  Outcome outcome;
  std::vector<Metric> metrics;
  std::vector<Finding> findings;
  nlohmann::json info = nlohmann::json::object();
};

nlohmann::json report_to_json(const RankReport& report);
// nullopt when the text is not a report (truncated file, other content).
std::optional<RankReport> report_from_json(const std::string& text);

// Writes to a temp file beside `path`, then renames: a reader never sees half a report.
bool write_report_file(const std::string& path, const RankReport& report);
std::optional<RankReport> read_report_file(const std::string& path);

}  // namespace nodeaudit::comm
