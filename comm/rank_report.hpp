// What rank 0 of a self-launched job hands back to the probe that launched it: its metrics,
// findings, info and outcome (streamed as lines, rank_stream.hpp). Other ranks send nothing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/metric.hpp"
#include "harness/core/probe.hpp"

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

}  // namespace nodeaudit::comm
