#include "harness/report/report_markdown.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/core/table.hpp"
#include "harness/report/report_details.hpp"
#include "harness/report/scorecard.hpp"
#include "harness/report/text_escape.hpp"

namespace nodeaudit::report {

std::string verdict_of(const NodeReport& node) {
  if (!node.assessment.is_object()) return "not assessed";
  return node.assessment.value("overall", nlohmann::json::object()).value("verdict", "?");
}

std::string bottleneck_of(const NodeReport& node) {
  if (!node.assessment.is_object()) return "";
  return node.assessment.value("bottleneck", nlohmann::json::object()).value("text", "");
}

std::string cost_text(const NodeReport& node) {
  if (!node.cost) return "not costed: " + node.cost_note;
  return fmt::format("{:.2f} ({} h; {:.4g} per million {})", node.cost->total, format_figure(node.cost->predicted_hours),
                     node.cost->per_million, node.cost->unit);
}

namespace {

std::string nodes_section(const Report& report) {
  std::string out = "## Nodes\n\n| node | hardware and software |\n|---|---|\n";
  for (const auto& node : report.nodes)
    out += fmt::format("| {} | {} |\n", markdown_cell(node.name), markdown_cell(node_summary(node.doc)));
  return out + "\n";
}

std::string assessment_section(const Report& report) {
  if (report.profile.empty()) return "## Assessment\n\nNo `--profile` given: nodes not assessed, runs not costed.\n\n";
  std::string out = fmt::format("## Assessment for `{}`\n\n", report.profile);
  out += "| node | verdict | limiting resource | cost of one run |\n|---|---|---|---|\n";
  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const NodeReport& node = report.nodes[i];
    const std::string cost = cost_text(node) + (static_cast<int>(i) == report.cheapest ? " **cheapest**" : "");
    out += fmt::format("| {} | {} | {} | {} |\n", markdown_cell(node.name), verdict_of(node),
                       markdown_cell(bottleneck_of(node)), markdown_cell(cost));
  }
  if (report.cheapest >= 0)
    out += fmt::format("\nCheapest effective run: **{}** (hourly price x predicted hours, plus per-run extras).\n",
                       markdown_cell(report.nodes[static_cast<std::size_t>(report.cheapest)].name));
  for (const NodeReport& node : report.nodes)
    if (const std::string graded = expected_values_of(node); !graded.empty())
      out += fmt::format("\n- {}: {}\n", markdown_cell(node.name), markdown_cell(graded));
  return out + "\n";
}

// Each scorecard cell: figure with unit, ratio to the best node, status.
std::string scorecard_cell_text(const ScorecardRow& row, std::size_t node) {
  const ScorecardCell& cell = row.cells[node];
  if (!cell.value) return cell.status;
  std::string text = cell_figure(cell);
  if (const std::string ratio = cell_ratio(cell, static_cast<int>(node) == row.best); !ratio.empty()) text += ", " + ratio;
  return text + ", " + cell.status;
}

// "- GEMM bf16 (slowest GPU): gpu.gemm tflops [dtype=bf16] median, min of 8 GPUs (vendor-a, vendor-b)"
std::string scorecard_sources(const Report& report, const Scorecard& card) {
  std::string out;
  for (const auto& row : card.rows) {
    std::vector<std::pair<std::string, std::string>> sources;  // source -> nodes, first-seen order
    for (std::size_t i = 0; i < row.cells.size(); ++i) {
      if (row.cells[i].source.empty()) continue;
      auto it = std::find_if(sources.begin(), sources.end(), [&](const auto& s) { return s.first == row.cells[i].source; });
      if (it == sources.end()) sources.emplace_back(row.cells[i].source, report.nodes[i].name);
      else it->second += ", " + report.nodes[i].name;
    }
    if (sources.empty()) continue;
    std::string text;
    for (const auto& [source, nodes] : sources)
      text += (text.empty() ? "" : "; ") + source + (sources.size() > 1 ? " (" + nodes + ")" : "");
    out += fmt::format("- {}: {}\n", markdown_cell(row.label), markdown_cell(text));
  }
  return out;
}

std::string scorecard_section(const Report& report) {
  if (report.profile.empty())
    return "## Scorecard\n\nNo `--profile` given: the scorecard needs a workload to choose its figures (GEMM dtype, "
           "gradient size, storage pattern); nodes not assessed, runs not costed. Every figure is under \"Full "
           "figures per probe\".\n\n";
  std::string out = fmt::format("## Scorecard for `{}`\n\n", report.profile);
  if (!report.target_note.empty()) out += report.target_note + "\n\n";
  for (const auto& note : report.provenance) out += "- **Mixed results:** " + markdown_cell(note) + "\n";
  if (!report.provenance.empty()) out += "\n";
  std::string header = "| |", rule = "|---|";
  for (const auto& node : report.nodes) header += " " + markdown_cell(node.name) + " |", rule += "---|";
  out += header + "\n" + rule + "\n| verdict |";
  for (const auto& node : report.nodes) out += " " + verdict_of(node) + " |";
  out += "\n| limiting resource |";
  for (const auto& node : report.nodes) out += " " + markdown_cell(short_bottleneck(node)) + " |";
  out += "\n| cost of one effective run |";
  for (std::size_t i = 0; i < report.nodes.size(); ++i) out += " " + markdown_cell(short_cost(report, i)) + " |";
  out += "\n";
  const Scorecard card = build_scorecard(report);
  for (const auto& row : card.rows) {
    out += "| " + markdown_cell(row.label) + " |";
    for (std::size_t i = 0; i < row.cells.size(); ++i) out += " " + markdown_cell(scorecard_cell_text(row, i)) + " |";
    out += "\n";
  }
  out += "\nEach figure: its value and unit, its ratio to the best node (higher is better on every row), and its "
         "status (measured on this node; published measurement (another node: source); datasheet peak (source); GPU table, not measured on this node; or not measured and why). Where each comes from:\n\n";
  return out + scorecard_sources(report, card) + "\n";
}

std::string details_section(const Report& report) {
  const std::vector<ProbeGroup> groups = group_details(report);
  std::string out = "## Full figures per probe\n\nEvery figure any node recorded (medians; best in bold), grouped by "
                    "probe; a node without a figure shows `-` and its probe's status says why.\n\n";
  for (const auto& group : groups) {
    out += fmt::format("### {} ({} figures)\n\n{}\n\n", group.probe, group.rows.size(), group.meaning);
    if (!group.every_node_ok())
      for (std::size_t i = 0; i < report.nodes.size(); ++i)
        out += fmt::format("- {}: {}\n", markdown_cell(report.nodes[i].name), markdown_cell(group.node_status[i]));
    if (!group.every_node_ok()) out += "\n";
    if (group.rows.empty()) continue;
    std::string header = "| metric | unit |", rule = "|---|---|";
    for (const auto& node : report.nodes) header += " " + markdown_cell(node.name) + " |", rule += "---|";
    out += header + "\n" + rule + "\n";
    for (const auto& row : group.rows) {
      out += fmt::format("| {} | {} |", markdown_cell(row.metric), markdown_cell(row.unit));
      for (std::size_t i = 0; i < row.medians.size(); ++i) {
        const std::string figure = row.medians[i] ? format_figure(*row.medians[i]) : "-";
        out += " " + (static_cast<int>(i) == row.best ? "**" + figure + "**" : figure) + " |";
      }
      out += "\n";
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string render_report_markdown(const Report& report) {
  std::string out = "# nodeaudit report\n\n";
  if (report.redacted) out += "Hostnames, serial numbers, UUIDs, PCI bus ids and command lines removed.\n\n";
  return out + scorecard_section(report) + nodes_section(report) + assessment_section(report) + details_section(report);
}

}  // namespace nodeaudit::report
