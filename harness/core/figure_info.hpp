// The one accessor for what a figure is: its unit, which way is better, and what it means. The
// scorer, the reports (terminal, Markdown, HTML), Prometheus and the scorecard read figures through
// it. A recorded result's own unit and direction are authoritative (a result written by another
// version renders as it was recorded); the probe catalogue's declaration fills what a record lacks
// and gives the meaning.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace nodeaudit {

struct FigureInfo {
  std::string unit;
  bool higher_is_better = true;
  std::string meaning;  // the declaration's line; empty for a figure this build does not declare
};

// A metric entry of a result document ({"name", "unit", "better", ...}) of the probe `probe_id`.
FigureInfo figure_info(const std::string& probe_id, const nlohmann::json& recorded_metric);
// The figure as this build declares it, where there is no record to read.
FigureInfo figure_info(const std::string& probe_id, const std::string& metric_name);
// For names held as C strings (the scorer's resource table): a const char* would also convert to json.
inline FigureInfo figure_info(const char* probe_id, const char* metric_name) {
  return figure_info(std::string(probe_id), std::string(metric_name));
}

}  // namespace nodeaudit
