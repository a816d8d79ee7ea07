#include "report_markdown.hpp"

#include <fmt/format.h>

#include "table.hpp"
#include "text_escape.hpp"

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
  if (!report.target_note.empty()) out += report.target_note + "\n\n";
  out += "| node | verdict | bottleneck | cost of one run |\n|---|---|---|---|\n";
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

std::string shared_section(const Report& report) {
  std::string out = fmt::format("## Shared metrics\n\n{} metrics measured on every node (medians; best in bold); {} "
                                "measured on only some nodes are not shown.\n\n| metric | unit |",
                                report.shared.size(), report.not_shared);
  std::string rule = "|---|---|";
  for (const auto& node : report.nodes) out += " " + markdown_cell(node.name) + " |", rule += "---|";
  out += "\n" + rule + "\n";
  for (const auto& row : report.shared) {
    out += fmt::format("| {} | {} |", markdown_cell(row.display), markdown_cell(row.unit));
    for (std::size_t i = 0; i < row.per_node.size(); ++i) {
      const std::string figure = format_figure(row.per_node[i].median);
      out += " " + (static_cast<int>(i) == row.best_node && row.per_node.size() > 1 ? "**" + figure + "**" : figure) + " |";
    }
    out += "\n";
  }
  return out + "\n";
}

}  // namespace

std::string render_report_markdown(const Report& report) {
  std::string out = "# nodeaudit report\n\n";
  if (report.redacted) out += "Hostnames, serial numbers, UUIDs, PCI bus ids and command lines removed.\n\n";
  return out + nodes_section(report) + assessment_section(report) + shared_section(report);
}

}  // namespace nodeaudit::report
