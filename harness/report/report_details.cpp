#include "harness/report/report_details.hpp"

#include <map>

#include "harness/core/probe_catalogue.hpp"
#include "harness/report/metric_index.hpp"

namespace nodeaudit::report {

namespace {

std::string status_of(const nlohmann::json& doc, const std::string& probe_id) {
  for (const auto& probe : doc.at("probes")) {
    if (probe.value("id", "") != probe_id) continue;
    const std::string status = probe.value("status", "?");
    const std::string reason = probe.value("reason", "");
    return status == "ok" || reason.empty() ? status : status + ": " + reason;
  }
  return "not in this result";
}

int strictly_best(const DetailRow& row) {
  int best = -1, valued = 0;
  bool tied = false;
  for (std::size_t i = 0; i < row.medians.size(); ++i) {
    if (!row.medians[i]) continue;
    ++valued;
    if (best < 0) {
      best = static_cast<int>(i);
      continue;
    }
    const double here = *row.medians[i], there = *row.medians[static_cast<std::size_t>(best)];
    if (here == there)
      tied = true;
    else if (row.higher_is_better ? here > there : here < there)
      best = static_cast<int>(i), tied = false;
  }
  return valued < 2 || tied ? -1 : best;
}

std::string metric_text(const MetricRecord& record) {
  return record.labels.empty() ? record.name : record.name + " [" + labels_text(record.labels) + "]";
}

}  // namespace

bool ProbeGroup::every_node_ok() const {
  for (const auto& status : node_status)
    if (status != "ok") return false;
  return true;
}

std::vector<ProbeGroup> group_details(const Report& report) {
  std::vector<ProbeGroup> groups;
  std::map<std::string, std::size_t> group_of;                        // probe id -> index
  std::map<std::string, std::pair<std::size_t, std::size_t>> row_of;  // key + unit -> (group, row)
  const std::size_t nodes = report.nodes.size();
  for (std::size_t n = 0; n < nodes; ++n) {
    const nlohmann::json& doc = report.nodes[n].doc;
    for (const auto& probe : doc.at("probes")) {
      const std::string id = probe.value("id", "");
      if (group_of.emplace(id, groups.size()).second) {
        ProbeGroup group{id, probe_meaning(id), {}, {}};
        for (const NodeReport& node : report.nodes) group.node_status.push_back(status_of(node.doc, id));
        groups.push_back(std::move(group));
      }
    }
    for (const MetricRecord& record : collect_metrics(doc)) {
      const std::size_t g = group_of.at(record.probe);
      const auto [it, added] =
          row_of.emplace(pairing_key(record) + "|" + record.unit, std::make_pair(g, groups[g].rows.size()));
      if (added)
        groups[g].rows.push_back(
            {metric_text(record), record.unit, record.higher_is_better, std::vector<std::optional<double>>(nodes), -1});
      groups[it->second.first].rows[it->second.second].medians[n] = record.median;
    }
  }
  for (auto& group : groups)
    for (auto& row : group.rows) row.best = strictly_best(row);
  return groups;
}

}  // namespace nodeaudit::report
