#include "harness/core/figure_info.hpp"

#include "harness/core/probe_catalogue.hpp"

namespace nodeaudit {

FigureInfo figure_info(const std::string& probe_id, const std::string& metric_name) {
  FigureInfo info;
  if (const FigureSpec* declared = declared_figure(probe_id, metric_name)) {
    info.unit = declared->unit;
    info.higher_is_better = declared->better.value_or(Better::higher) == Better::higher;
    info.meaning = declared->meaning;
  }
  return info;
}

FigureInfo figure_info(const std::string& probe_id, const nlohmann::json& recorded_metric) {
  const auto name = recorded_metric.find("name");
  FigureInfo info = figure_info(probe_id, name != recorded_metric.end() && name->is_string() ? name->get<std::string>() : "");
  const auto unit = recorded_metric.find("unit");
  if (unit != recorded_metric.end() && unit->is_string()) info.unit = unit->get<std::string>();
  const auto better = recorded_metric.find("better");
  if (better != recorded_metric.end() && (*better == "higher" || *better == "lower")) info.higher_is_better = *better == "higher";
  return info;
}

}  // namespace nodeaudit
