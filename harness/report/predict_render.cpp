#include "harness/report/predict_render.hpp"

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "harness/report/chart_data.hpp"
#include "harness/report/svg.hpp"
#include "harness/report/text_escape.hpp"

namespace nodeaudit::report {

using nlohmann::json;

namespace {

bool judged(const json& cell) { return cell.contains("step_s") && cell["step_s"].is_number(); }

std::string pct(const json& value) {
  return value.is_number() ? fmt::format("{:.1f}%", 100 * value.get<double>()) : "not judged";
}

std::string rate(double value) { return value >= 100 ? fmt::format("{:.0f}", value) : fmt::format("{:.3g}", value); }

std::string step_text(const json& cell) {
  if (!judged(cell)) return "not judged";
  return (cell.value("lower_bound", false) ? ">= " : "") + format_duration(cell["step_s"].get<double>());
}

std::string samples_text(const json& cell) {
  if (!judged(cell)) return "not judged";
  return (cell.value("lower_bound", false) ? "<= " : "") + rate(cell["samples_per_s"].get<double>());
}

std::string cost_text(const json& cell) {
  const json& cost = cell.contains("cost") ? cell["cost"] : json();
  if (!cost.is_object()) return "-";
  if (cost.contains("not_judged")) return "not judged";
  return fmt::format("{:.2f}", cost.value("run_cost", 0.0));
}

struct Row {
  std::string node, step, samples, wait, util, limiting, cost;
};

Row row_of(const json& cell) {
  return {cell.value("node", "?"), step_text(cell),      samples_text(cell),       pct(cell.value("data_wait_share", json())),
          pct(cell.value("gpu_utilization", json())),   judged(cell) ? cell.value("limiting", "?") : "not judged", cost_text(cell)};
}

// Why each part was not judged, with the probe to run.
std::string not_judged_lines(const json& cells, const std::string& bullet) {
  std::string out;
  for (const auto& cell : cells) {
    if (cell.contains("step_not_judged"))
      out += fmt::format("{}{}: step not judged: {}\n", bullet, cell.value("node", "?"), cell["step_not_judged"].get<std::string>());
    for (const auto& part : cell.value("not_judged", json::array()))
      out += fmt::format("{}{}: {} not judged: {} (measure it: {})\n", bullet, cell.value("node", "?"), part.value("resource", "?"),
                         part.value("why", ""), part.value("to_measure", ""));
  }
  return out;
}

std::string job_heading(const json& document, std::size_t j) {
  const json& job = document["jobs"][j];
  return fmt::format("{} ({}; {})", job.value("name", "?"), job.value("source", "?"), job.value("basis", ""));
}

}  // namespace

json best_nodes(const json& document) {
  json out = json::array();
  for (const auto& cells : document["cells"]) {
    const json* best = nullptr;
    for (const auto& cell : cells)
      if (judged(cell) && !cell.value("lower_bound", false) &&
          (!best || cell["samples_per_s"].get<double>() > (*best)["samples_per_s"].get<double>()))
        best = &cell;
    json limits = json::object();
    for (const auto& cell : cells)
      if (&cell != best) limits[cell.value("node", "?")] = judged(cell) ? cell.value("limiting", "?") : "not judged";
    out.push_back({{"best", best ? json((*best)["node"]) : json(nullptr)}, {"limits_elsewhere", limits}});
  }
  return out;
}

std::string render_predict_terminal(const json& document) {
  std::string out;
  for (std::size_t j = 0; j < document["cells"].size(); ++j) {
    const json& cells = document["cells"][j];
    out += "job " + job_heading(document, j) + "\n";
    out += fmt::format("  {:<20} {:>12} {:>10} {:>10} {:>10}  {:<12} {}\n", "node", "step", "samples/s", "data wait",
                       "GPU util", "limiting", "cost/run");
    for (const auto& cell : cells) {
      const Row r = row_of(cell);
      out += fmt::format("  {:<20} {:>12} {:>10} {:>10} {:>10}  {:<12} {}\n", r.node, r.step, r.samples, r.wait, r.util, r.limiting, r.cost);
    }
    for (const auto& cell : cells)
      if (judged(cell)) out += fmt::format("  {}: GPU util is the {}\n", cell.value("node", "?"), cell.value("utilization_basis", ""));
    out += not_judged_lines(cells, "  ");
  }
  return out;
}

std::string render_predict_markdown(const json& document) {
  std::string out = "# Predicted step per node\n\n";
  for (std::size_t j = 0; j < document["cells"].size(); ++j) {
    const json& cells = document["cells"][j];
    out += "## " + markdown_cell(job_heading(document, j)) + "\n\n";
    out += "| node | step | samples/s | data wait | GPU util | limiting | cost per run |\n|---|---|---|---|---|---|---|\n";
    for (const auto& cell : cells) {
      const Row r = row_of(cell);
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", markdown_cell(r.node), r.step, r.samples, r.wait, r.util,
                         markdown_cell(r.limiting), r.cost);
    }
    const std::string missing = not_judged_lines(cells, "- ");
    if (!missing.empty()) out += "\n" + missing;
    out += "\n";
  }
  return out;
}

namespace {

// jobs x nodes: samples/s and cost per run in each cell.
std::string match_cell(const json& cell) {
  const std::string cost = cost_text(cell);
  return samples_text(cell) + (cost == "-" ? "" : " / " + cost);
}

std::string best_line(const json& document, std::size_t j, const std::string& bullet) {
  const json& best = document["best"][j];
  std::string limits;
  for (const auto& [node, what] : best["limits_elsewhere"].items())
    limits += fmt::format("{}{}: {}", limits.empty() ? "" : ", ", node, what.get<std::string>());
  return fmt::format("{}{}: best on {}{}\n", bullet, document["jobs"][j].value("name", "?"),
                     best["best"].is_string() ? best["best"].get<std::string>() : "no node judged",
                     limits.empty() ? "" : "; limited elsewhere by " + limits);
}

}  // namespace

std::string render_match_terminal(const json& document) {
  std::string out = fmt::format("{:<24}", "job \\ node (samples/s / cost)");
  for (const auto& node : document["nodes"]) out += fmt::format(" {:>22}", node.get<std::string>());
  out += "\n";
  for (std::size_t j = 0; j < document["cells"].size(); ++j) {
    out += fmt::format("{:<24}", document["jobs"][j].value("name", "?"));
    for (const auto& cell : document["cells"][j]) out += fmt::format(" {:>22}", match_cell(cell));
    out += "\n";
  }
  for (std::size_t j = 0; j < document["cells"].size(); ++j) out += best_line(document, j, "");
  for (const auto& cells : document["cells"]) out += not_judged_lines(cells, "");
  return out;
}

std::string render_match_markdown(const json& document) {
  std::string out = "# Jobs x nodes: samples/s / cost per effective run\n\n| job |";
  for (const auto& node : document["nodes"]) out += " " + markdown_cell(node.get<std::string>()) + " |";
  out += "\n|---|";
  for (std::size_t n = 0; n < document["nodes"].size(); ++n) out += "---|";
  out += "\n";
  for (std::size_t j = 0; j < document["cells"].size(); ++j) {
    out += "| " + markdown_cell(document["jobs"][j].value("name", "?")) + " |";
    for (const auto& cell : document["cells"][j]) out += " " + markdown_cell(match_cell(cell)) + " |";
    out += "\n";
  }
  out += "\n";
  for (std::size_t j = 0; j < document["cells"].size(); ++j) out += best_line(document, j, "- ");
  std::string missing;
  for (const auto& cells : document["cells"]) missing += not_judged_lines(cells, "- ");
  if (!missing.empty()) out += "\n## Not judged\n\n" + missing;
  return out;
}

std::string render_match_html(const json& document) {
  BarChart chart;
  chart.id = "samples-per-s";
  chart.title = "Predicted samples/s per job and node";
  chart.unit = "samples/s";
  chart.note = "from nodeaudit's prediction model: each job's demand against each node's figures; a node where a part "
               "was not judged has no bar";
  for (const auto& node : document["nodes"]) chart.series.push_back(node.get<std::string>());
  for (std::size_t j = 0; j < document["cells"].size(); ++j) {
    chart.categories.push_back(document["jobs"][j].value("name", "?"));
    std::vector<std::optional<double>> values;
    for (const auto& cell : document["cells"][j])
      values.push_back(judged(cell) && !cell.value("lower_bound", false) ? std::optional<double>(cell["samples_per_s"].get<double>())
                                                                          : std::nullopt);
    chart.values.push_back(values);
  }
  std::string out = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>nodeaudit match</title></head><body>\n";
  out += "<h1>Jobs x nodes: samples/s / cost per effective run</h1>\n<table border=\"1\"><tr><th>job</th>";
  for (const auto& node : document["nodes"]) out += "<th>" + xml_escape(node.get<std::string>()) + "</th>";
  out += "</tr>\n";
  for (std::size_t j = 0; j < document["cells"].size(); ++j) {
    out += "<tr><td>" + xml_escape(document["jobs"][j].value("name", "?")) + "</td>";
    for (const auto& cell : document["cells"][j]) out += "<td>" + xml_escape(match_cell(cell)) + "</td>";
    out += "</tr>\n";
  }
  out += "</table>\n<ul>\n";
  for (std::size_t j = 0; j < document["cells"].size(); ++j) out += "<li>" + xml_escape(best_line(document, j, "")) + "</li>\n";
  out += "</ul>\n" + render_bar_chart(chart) + "\n";
  std::string missing;
  for (const auto& cells : document["cells"]) missing += not_judged_lines(cells, "");
  if (!missing.empty()) out += "<h2>Not judged</h2>\n<pre>" + xml_escape(missing) + "</pre>\n";
  return out + "</body></html>\n";
}

}  // namespace nodeaudit::report
