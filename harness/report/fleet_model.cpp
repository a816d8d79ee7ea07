#include "harness/report/fleet_model.hpp"

#include <charconv>
#include <filesystem>

#include "harness/core/errors.hpp"
#include "harness/core/figure_info.hpp"
#include "harness/report/fleet_drift.hpp"

namespace nodeaudit::report {

namespace {

using json = nlohmann::json;

std::string node_name(const std::string& path, const json& doc) {
  const json& host = doc.at("env").at("host");
  const auto hostname = host.find("hostname");
  if (hostname != host.end() && hostname->is_string() && !hostname->get<std::string>().empty())
    return hostname->get<std::string>();
  return std::filesystem::path(path).stem().string();
}

bool parse_gpu_index(const std::string& text, std::int32_t& gpu) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), gpu);
  return error == std::errc() && end == text.data() + text.size() && gpu >= 0;
}

// The member `key` of `object`, or an empty value (never a copy: a probe's metrics carry every sample).
const json& member(const json& object, const char* key) {
  static const json none;
  const auto it = object.find(key);
  return it == object.end() ? none : *it;
}

std::string label_text(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// Numbers the figure within one node's summary (the fleet numbers them when the summary is added).
std::uint32_t local_figure(NodeSummary& summary, std::unordered_map<std::string, std::uint32_t>& index,
                           const std::string& probe, const std::string& params, const json& metric, std::string labels,
                           bool per_gpu) {
  const std::string name = metric.at("name").get<std::string>();
  const FigureInfo figure = figure_info(probe, metric);
  const std::string& unit = figure.unit;
  std::string key = probe + "|" + params + "|" + name + "|" + labels + "|" + unit;
  const auto [it, added] = index.emplace(key, static_cast<std::uint32_t>(summary.figures.size()));
  if (added)
    summary.figures.emplace_back(std::move(key), FleetFigure{probe, name, std::move(labels), unit,
                                                             figure.higher_is_better, per_gpu});
  return it->second;
}

void add_probe(NodeSummary& summary, std::unordered_map<std::string, std::uint32_t>& index, const json& probe) {
  FleetNode& node = summary.node;
  const std::string id = probe.value("id", "?");
  const std::string status = probe.value("status", "?");
  if (status == "failed" || status == "crashed" || status == "timeout")
    node.faults.push_back(id + " " + status + ": " + probe.value("reason", ""));
  for (const auto& finding : member(probe, "findings"))
    if (finding.value("severity", "") == "fail")
      node.faults.push_back("finding " + finding.value("code", "?") + ": " + finding.value("message", ""));
  const std::string params = member(probe, "params").is_null() ? "{}" : member(probe, "params").dump();
  const bool disturbed = probe.value("disturbed", false);
  for (const auto& metric : member(probe, "metrics")) {
    std::string labels;  // json objects iterate in key order: the text is canonical
    std::int32_t gpu = -1;
    const json& labels_json = member(metric, "labels");
    if (labels_json.is_object())
      for (const auto& [key, value] : labels_json.items()) {
        const std::string text = label_text(value);
        if (key == "gpu" && parse_gpu_index(text, gpu)) continue;
        labels += (labels.empty() ? "" : ", ") + key + "=" + text;
      }
    const std::uint32_t figure = local_figure(summary, index, id, params, metric, std::move(labels), gpu >= 0);
    node.values.push_back({figure, gpu, metric.at("median").get<double>(), disturbed});
  }
}

}  // namespace

std::string FleetFigure::display() const {
  return probe + " " + name + (labels.empty() ? "" : " [" + labels + "]");
}

NodeSummary summarize_result(const std::string& path, const json& doc) {
  NodeSummary summary;
  summary.node.name = node_name(path, doc);
  summary.node.path = path;
  std::unordered_map<std::string, std::uint32_t> index;
  for (const auto& probe : doc.at("probes")) add_probe(summary, index, probe);
  summary.node.config = config_of(doc);
  summary.node.provenance = provenance_of(summary.node.name, doc);
  return summary;
}

void add_summary(FleetInput& fleet, NodeSummary summary) {
  FleetNode& node = summary.node;
  if (const auto it = fleet.node_index.find(node.name); it != fleet.node_index.end())
    throw UsageError("node name '" + node.name + "'", "held by both " + fleet.nodes[it->second].path + " and " +
                                                          node.path +
                                                          "; a fleet report takes one result per node (leave one out)");
  std::vector<std::uint32_t> fleet_number(summary.figures.size());
  for (std::size_t i = 0; i < summary.figures.size(); ++i) {
    auto& [key, figure] = summary.figures[i];
    const auto [it, added] =
        fleet.figure_index.emplace(std::move(key), static_cast<std::uint32_t>(fleet.figures.size()));
    if (added) fleet.figures.push_back(std::move(figure));
    fleet_number[i] = it->second;
  }
  for (auto& value : node.values) value.figure = fleet_number[value.figure];
  fleet.node_index.emplace(node.name, fleet.nodes.size());
  fleet.nodes.push_back(std::move(node));
}

void add_result(FleetInput& fleet, const std::string& path, const json& doc) {
  add_summary(fleet, summarize_result(path, doc));
}

}  // namespace nodeaudit::report
