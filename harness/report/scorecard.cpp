#include "harness/report/scorecard.hpp"

#include <fmt/format.h>

#include "harness/core/figure_info.hpp"
#include "harness/core/table.hpp"
#include "harness/score/label_selectors.hpp"
#include "harness/score/resource_probes.hpp"
#include "harness/score/result_view.hpp"

namespace nodeaudit::report {

namespace {

using json = nlohmann::json;
constexpr double gib = 1024.0 * 1024.0 * 1024.0;

ScorecardCell not_measured(const std::string& why) {
  return {std::nullopt, "", "not measured: " + why, "", std::nullopt};
}

const json* resource_entry(const json& assessment, const std::string& resource) {
  const auto resources = assessment.find("resources");
  if (resources == assessment.end() || !resources->is_array()) return nullptr;
  for (const auto& entry : *resources)
    if (entry.value("resource", "") == resource) return &entry;
  return nullptr;
}

// A resource the profile does not use still has a figure worth showing a buyer (HBM for a
// training profile whose GEMMs hide memory traffic): read it the way the scorer would have.
ScorecardCell unused_hbm_figure(const json& doc, const std::string& note) {
  const std::string status = std::string(score::measured_here_label) + " (not used by this profile: " + note + ")";
  const score::ResourceFigure& hbm = score::resource_figure::gpu_memory_bandwidth;
  const score::ProbeState probe = score::probe_state(doc, hbm.probe);
  if (!probe.measured())
    return {std::nullopt, "", "not measured: " + probe.why + " (not used by this profile)", "", {}};
  const auto figure = score::slowest_gpu(*probe.probe, hbm.probe, hbm.metric, score::label_selector::copy_kernel);
  if (!figure) return {std::nullopt, "", fmt::format("not measured: no {} {} [kernel=copy]", hbm.probe, hbm.metric), "", {}};
  return {figure->value, figure_info(hbm.probe, hbm.metric).unit, figure->datasheet ? std::string(score::gpu_table_label) : status,
          figure->source, {}};
}

ScorecardCell resource_cell(const NodeReport& node, const std::string& resource) {
  const json* entry = resource_entry(node.assessment, resource);
  if (!entry) return not_measured("not in the assessment");
  if (!entry->value("needed", true)) {
    const std::string note = entry->value("note", "");
    if (resource == "gpu_memory_bandwidth") return unused_hbm_figure(node.doc, note);
    return {std::nullopt, "", "not used by this profile: " + note, "", {}};
  }
  if (entry->contains("not_judged")) return not_measured(entry->at("not_judged").get<std::string>());
  const json& capacity = entry->at("capacity");
  return {capacity.at("value").get<double>(),
          capacity.value("unit", ""),
          capacity.value("basis", score::measured_here_label),
          capacity.value("metric", ""),
          {}};
}

ScorecardCell usable_memory_cell(const NodeReport& node) {
  const json memory = node.assessment.value("memory", json::object());
  if (memory.contains("not_judged")) return not_measured(memory["not_judged"].get<std::string>());
  if (!memory.contains("usable_bytes")) return not_measured("no usable GPU memory in the assessment");
  return {memory["usable_bytes"].get<double>() / gib,
          "GiB per GPU",
          memory.value("basis", score::measured_here_label),
          memory.value("metric", ""),
          {}};
}

ScorecardCell ram_per_gpu_cell(const NodeReport& node) {
  const json host = node.assessment.value("host", json::object());
  if (host.contains("ram_not_judged")) return not_measured(host["ram_not_judged"].get<std::string>());
  const int gpus = node.assessment.value("gpus", 0);
  if (!host.contains("ram_total_bytes") || gpus <= 0) return not_measured("no host RAM or GPU count in the assessment");
  std::string status = score::measured_here_label;
  std::string source = fmt::format("env.host.ram_total_bytes / {} GPUs", gpus);
  if (host.contains("limited_by")) {
    status = std::string(score::measured_here_label) + " (container or cgroup limit)";
    source = fmt::format("env.container.usable_ram_bytes / {} GPUs", gpus);
  }
  if (host.contains("gpus_basis")) status += "; GPU count " + std::string(score::gpu_table_label);
  return {host["ram_total_bytes"].get<double>() / gpus / gib, "GiB per GPU", status, source, {}};
}

// Ratios against the largest figure among the cells that share the first figure's unit; a node
// whose figure has another unit (a fallback metric) keeps its figure and gets no ratio. A tie for
// the largest singles out no node.
void rank(ScorecardRow& row) {
  std::string unit;
  int valued = 0, best = -1;
  bool tied = false;
  for (std::size_t i = 0; i < row.cells.size(); ++i) {
    const ScorecardCell& cell = row.cells[i];
    if (!cell.value) continue;
    if (unit.empty()) unit = cell.unit;
    if (cell.unit != unit) continue;
    ++valued;
    if (best < 0 || *cell.value > *row.cells[static_cast<std::size_t>(best)].value)
      best = static_cast<int>(i), tied = false;
    else if (*cell.value == *row.cells[static_cast<std::size_t>(best)].value)
      tied = true;
  }
  if (valued < 2) return;
  row.best = tied ? -1 : best;
  const double largest = *row.cells[static_cast<std::size_t>(best)].value;
  if (largest <= 0) return;
  for (auto& cell : row.cells)
    if (cell.value && cell.unit == unit) cell.ratio_to_best = *cell.value / largest;
}

template <typename CellOf>
ScorecardRow make_row(const Report& report, const std::string& resource, const std::string& label, CellOf cell_of) {
  ScorecardRow row{resource, label, {}, -1};
  for (const NodeReport& node : report.nodes)
    row.cells.push_back(node.assessment.is_object() ? cell_of(node) : not_measured("not assessed (no --profile)"));
  rank(row);
  return row;
}

}  // namespace

Scorecard build_scorecard(const Report& report) {
  Scorecard card;
  card.assessed = !report.profile.empty();
  if (!card.assessed) return card;
  const auto resource = [&](const std::string& name, const std::string& label) {
    return make_row(report, name, label, [&](const NodeReport& node) { return resource_cell(node, name); });
  };
  const std::string dtype = report.dtype.empty() ? "at the profile's dtype" : report.dtype;
  card.rows.push_back(resource("compute", "GEMM " + dtype + " (slowest GPU)"));
  card.rows.push_back(make_row(report, "gpu_memory", "usable GPU memory (smallest GPU)", usable_memory_cell));
  card.rows.push_back(resource("gpu_memory_bandwidth", "HBM copy bandwidth (slowest GPU)"));
  card.rows.push_back(resource("host_to_device", "pinned host-to-device, all GPUs at once (slowest GPU)"));
  card.rows.push_back(resource("communication", "all-reduce busbw at the gradient size"));
  card.rows.push_back(resource("storage", "storage at the profile's access pattern"));
  card.rows.push_back(resource("cpu_decode", "CPU loader per GPU"));
  card.rows.push_back(make_row(report, "host_ram", "host RAM per GPU", ram_per_gpu_cell));
  return card;
}

std::string cell_figure(const ScorecardCell& cell) {
  if (!cell.value) return "-";
  return format_figure(*cell.value) + (cell.unit.empty() ? "" : " " + cell.unit);
}

std::string cell_ratio(const ScorecardCell& cell, bool best) {
  if (!cell.ratio_to_best) return "";
  return fmt::format("{:.2f}x{}", *cell.ratio_to_best, best ? " (best)" : "");
}

std::string short_bottleneck(const NodeReport& node) {
  if (!node.assessment.is_object()) return "not assessed";
  const json bottleneck = node.assessment.value("bottleneck", json::object());
  const std::string text = bottleneck.value("text", bottleneck.value("resource", ""));
  const auto advice = text.find(" \xE2\x80\x94 ");  // " — ": the sentence's advice follows
  return advice == std::string::npos ? text : text.substr(0, advice);
}

std::string short_cost(const Report& report, std::size_t node) {
  const NodeReport& here = report.nodes[node];
  if (!here.cost) return "not costed: " + here.cost_note;
  const std::string figure =
      fmt::format("{:.2f} for {} h", here.cost->total, format_figure(here.cost->predicted_hours));
  if (static_cast<int>(node) == report.cheapest) return figure + " (cheapest)";
  if (report.cheapest < 0) return figure;
  const double cheapest = report.nodes[static_cast<std::size_t>(report.cheapest)].cost->total;
  return cheapest > 0 ? fmt::format("{} ({:.2f}x the cheapest)", figure, here.cost->total / cheapest) : figure;
}

}  // namespace nodeaudit::report
