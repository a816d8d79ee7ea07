#include "harness/report/report_html.hpp"

#include <fmt/format.h>

#include "harness/core/table.hpp"
#include "harness/report/chart_data.hpp"
#include "harness/report/report_details.hpp"
#include "harness/report/report_markdown.hpp"
#include "harness/report/scorecard.hpp"
#include "harness/report/svg.hpp"
#include "harness/report/text_escape.hpp"

namespace nodeaudit::report {

namespace {

constexpr const char* head_before_title =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
    "script-src 'unsafe-inline'\">\n<title>";
constexpr const char* head_after_title =
    "</title>\n<style>\n"
    "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}"
    "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}th{background:#f4f4f4}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}td.best{font-weight:bold}"
    "figure{display:inline-block;margin:1em;vertical-align:top}figcaption{font-size:13px;color:#555;max-width:680px}"
    ".cheapest{background:#e6f4e6}.no-data{color:#888}td .status,td.status{font-size:12px;color:#555}"
    "td .ratio{font-size:12px}table.scorecard th{text-align:left}details.probe{margin:0.5em 0}"
    "details.probe summary{cursor:pointer}.mixed{background:#fff4e0;padding:4px 8px}td.fail{color:#a00}"
    ".pass{color:#070}\n</style>\n</head>\n<body>\n";

constexpr const char* marker_script =
    "<script>\n(function () {\n  var charts = document.querySelectorAll('svg.chart');\n  var drawn = 0;\n"
    "  charts.forEach(function (c) { if (c.querySelector('rect.bar, circle.point')) drawn++; });\n"
    "  document.body.setAttribute('data-charts-total', String(charts.length));\n"
    "  document.body.setAttribute('data-charts-rendered', String(drawn));\n})();\n</script>\n";

std::string cell_html(const std::string& text, const std::string& css = "") {
  return (css.empty() ? "<td>" : "<td class=\"" + css + "\">") + xml_escape(text) + "</td>";
}

std::string nodes_table(const Report& report) {
  std::string out = "<h2>Nodes</h2>\n<table>\n<tr><th>node</th><th>hardware and software</th></tr>\n";
  for (const auto& node : report.nodes) out += "<tr>" + cell_html(node.name) + cell_html(node_summary(node.doc)) + "</tr>\n";
  return out + "</table>\n";
}

std::string assessment_table(const Report& report) {
  if (report.profile.empty()) return "<h2>Assessment</h2>\n<p>No profile given: nodes not assessed, runs not costed.</p>\n";
  std::string out = "<h2>Assessment for " + xml_escape(report.profile) + "</h2>\n";
  out += "<table>\n<tr><th>node</th><th>verdict</th><th>limiting resource</th><th>cost of one run</th></tr>\n";
  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const NodeReport& node = report.nodes[i];
    const bool cheapest = static_cast<int>(i) == report.cheapest;
    out += std::string(cheapest ? "<tr class=\"cheapest\">" : "<tr>") + cell_html(node.name) + cell_html(verdict_of(node)) +
           cell_html(bottleneck_of(node)) + cell_html(cost_text(node) + (cheapest ? " (cheapest)" : "")) + "</tr>\n";
  }
  out += "</table>\n";
  if (report.cheapest >= 0)
    out += "<p>Cheapest effective run: <strong>" + xml_escape(report.nodes[static_cast<std::size_t>(report.cheapest)].name) +
           "</strong> (hourly price x predicted hours, plus per-run extras).</p>\n";
  for (const NodeReport& node : report.nodes)
    if (const std::string graded = expected_values_of(node); !graded.empty())
      out += "<p>" + xml_escape(node.name) + ": " + xml_escape(graded) + "</p>\n";
  return out;
}

template <typename Chart>
std::string figure(const Chart& chart, std::string (*render)(const Chart&)) {
  const std::string caption = "<figcaption><strong>" + xml_escape(chart.title) + "</strong>: " + xml_escape(chart.note) + "</figcaption>\n";
  if (!chart.has_data())
    return "<figure class=\"no-data\" id=\"" + xml_escape(chart.id) + "-missing\">\n" + caption +
           "<p class=\"no-data\">Not measured in any of these results.</p>\n</figure>\n";
  return "<figure>\n" + render(chart) + caption + "</figure>\n";
}

std::string charts_section(const Report& report) {
  const ChartSet charts = build_charts(report);
  std::string out = "<h2>Charts</h2>\n<div class=\"charts\">\n";
  out += figure(charts.gemm, &render_bar_chart);
  for (const auto& panel : charts.bandwidth) out += figure(panel, &render_bar_chart);
  out += figure(charts.allreduce_curve, &render_line_chart);
  out += figure(charts.storage_sweep, &render_line_chart);
  out += figure(charts.uniformity, &render_bar_chart);
  return out + "</div>\n";
}

std::string scorecard_cell_html(const ScorecardRow& row, std::size_t node) {
  const ScorecardCell& cell = row.cells[node];
  if (!cell.value) return cell_html(cell.status, "status");
  const bool best = static_cast<int>(node) == row.best;
  std::string text = "<td class=\"num" + std::string(best ? " best" : "") + "\"" +
                     (cell.source.empty() ? "" : " title=\"" + xml_escape(cell.source) + "\"") + ">" +
                     xml_escape(cell_figure(cell));
  if (const std::string ratio = cell_ratio(cell, best); !ratio.empty()) text += "<br><span class=\"ratio\">" + xml_escape(ratio) + "</span>";
  return text + "<br><span class=\"status\">" + xml_escape(cell.status) + "</span></td>";
}

std::string scorecard_table(const Report& report) {
  if (report.profile.empty())
    return "<h2>Scorecard</h2>\n<p>No profile given: the scorecard needs a workload to choose its figures (GEMM dtype, "
           "gradient size, storage pattern); nodes not assessed, runs not costed. Every figure is under Full figures "
           "per probe.</p>\n";
  std::string out = "<h2>Scorecard for " + xml_escape(report.profile) + "</h2>\n";
  if (!report.target_note.empty()) out += "<p class=\"datasheet\">" + xml_escape(report.target_note) + "</p>\n";
  for (const auto& note : report.provenance) out += "<p class=\"mixed\"><strong>Mixed results:</strong> " + xml_escape(note) + "</p>\n";
  out += "<table class=\"scorecard\">\n<tr><th></th>";
  for (const auto& node : report.nodes) out += "<th>" + xml_escape(node.name) + "</th>";
  out += "</tr>\n<tr><th>verdict</th>";
  for (const auto& node : report.nodes) out += cell_html(verdict_of(node), "verdict");
  out += "</tr>\n<tr><th>limiting resource</th>";
  for (const auto& node : report.nodes) out += cell_html(short_bottleneck(node));
  out += "</tr>\n<tr><th>cost of one effective run</th>";
  for (std::size_t i = 0; i < report.nodes.size(); ++i)
    out += cell_html(short_cost(report, i), static_cast<int>(i) == report.cheapest ? "cheapest" : "");
  out += "</tr>\n";
  for (const auto& row : build_scorecard(report).rows) {
    out += "<tr><th>" + xml_escape(row.label) + "</th>";
    for (std::size_t i = 0; i < row.cells.size(); ++i) out += scorecard_cell_html(row, i);
    out += "</tr>\n";
  }
  return out + "</table>\n<p>Each figure: its value and unit, its ratio to the best node (higher is better on every "
               "row) and its status; hover a figure for the metric it came from.</p>\n";
}

std::string details_html(const Report& report) {
  std::string out = "<h2>Full figures per probe</h2>\n<p>Every figure any node recorded (medians; best in bold), "
                    "folded per probe; a node without a figure shows - and its probe's status says why.</p>\n";
  for (const auto& group : group_details(report)) {
    out += fmt::format("<details class=\"probe\" id=\"probe-{}\">\n<summary><strong>{}</strong> ({} figures): {}</summary>\n",
                       xml_escape(group.probe), xml_escape(group.probe), group.rows.size(), xml_escape(group.meaning));
    if (!group.every_node_ok()) {
      out += "<ul>\n";
      for (std::size_t i = 0; i < report.nodes.size(); ++i)
        out += "<li>" + xml_escape(report.nodes[i].name) + ": " + xml_escape(group.node_status[i]) + "</li>\n";
      out += "</ul>\n";
    }
    if (!group.rows.empty()) {
      out += "<table>\n<tr><th>metric</th><th>unit</th>";
      for (const auto& node : report.nodes) out += "<th>" + xml_escape(node.name) + "</th>";
      out += "</tr>\n";
      for (const auto& row : group.rows) {
        out += "<tr>" + cell_html(row.metric) + cell_html(row.unit);
        for (std::size_t i = 0; i < row.medians.size(); ++i)
          out += cell_html(row.medians[i] ? format_figure(*row.medians[i]) : "-", static_cast<int>(i) == row.best ? "num best" : "num");
        out += "</tr>\n";
      }
      out += "</table>\n";
    }
    out += "</details>\n";
  }
  return out;
}

}  // namespace

std::string html_page_head(const std::string& title) { return head_before_title + xml_escape(title) + head_after_title; }

std::string render_report_html(const Report& report) {
  std::string out = html_page_head("nodeaudit report");
  out += "<h1>nodeaudit report</h1>\n";
  if (report.redacted) out += "<p>Hostnames, serial numbers, UUIDs, PCI bus ids and command lines removed.</p>\n";
  out += scorecard_table(report) + nodes_table(report) + assessment_table(report) + charts_section(report) + details_html(report);
  return out + marker_script + "</body>\n</html>\n";
}

}  // namespace nodeaudit::report
