#include <fmt/format.h>

#include "harness/core/probe_catalogue.hpp"
#include "harness/core/table.hpp"
#include "harness/report/fleet_render.hpp"
#include "harness/report/report_html.hpp"
#include "harness/report/text_escape.hpp"

namespace nodeaudit::report {

namespace {


std::string td(const std::string& text, const std::string& css = "") {
  return (css.empty() ? "<td>" : "<td class=\"" + css + "\">") + xml_escape(text) + "</td>";
}

std::string failing_html(const FleetInput& fleet, const FleetVerdict& verdict) {
  const bool pass = verdict.failed_nodes == 0;
  std::string out = "<h2 class=\"" + std::string(pass ? "pass" : "fail") +
                    "\">Verdict: " + xml_escape(fleet_headline(fleet, verdict)) + "</h2>\n";
  if (pass) return out;
  out += "<table class=\"failing\">\n<tr><th>node</th><th>why it fails</th></tr>\n";
  for (std::size_t n = 0; n < fleet.nodes.size(); ++n) {
    if (verdict.reasons[n].empty()) continue;
    out += "<tr>" + td(fleet.nodes[n].name, "fail") + "<td><ul>";
    for (const auto& reason : verdict.reasons[n]) out += "<li>" + xml_escape(reason) + "</li>";
    out += "</ul></td></tr>\n";
  }
  return out + "</table>\n";
}

std::string gpus_html(const FleetInput& fleet, const FleetVerdict& verdict) {
  if (verdict.gpu_outliers.empty()) return "";
  std::string out =
      "<h2>Outlier GPUs</h2>\n<table>\n<tr><th>node</th><th>GPU</th><th>figure</th><th>value</th><th>node's best "
      "GPU</th><th>fleet's GPU median</th></tr>\n";
  for (const auto& o : verdict.gpu_outliers) {
    const FleetFigure& figure = fleet.figures[o.figure];
    out += "<tr>" + td(fleet.nodes[o.node].name) + td(std::to_string(o.gpu), "num") + td(figure.display()) +
           td(format_figure(o.value) + " " + figure.unit, "num") +
           td(o.node_best ? format_figure(*o.node_best) : "within limit", o.node_best ? "num fail" : "num") +
           td(o.fleet_median ? format_figure(*o.fleet_median) : "within limit", o.fleet_median ? "num fail" : "num") +
           "</tr>\n";
  }
  return out + "</table>\n";
}

std::string drift_html(const FleetInput& fleet, const FleetVerdict& verdict) {
  std::string out = "<h2>Configuration drift</h2>\n";
  if (verdict.drift.empty())
    return out +
           "<p>Every node records the same driver, CUDA, NCCL, kernel, firmware, GPU settings and check "
           "findings.</p>\n";
  out += "<table>\n<tr><th>setting</th><th>value</th><th>nodes</th></tr>\n";
  for (const auto& setting : verdict.drift)
    for (std::size_t v = 0; v < setting.values.size(); ++v) {
      const DriftValue& value = setting.values[v];
      const std::string shown =
          (value.value.empty() ? "not recorded" : value.value) + (value.example.empty() ? "" : ": " + value.example);
      const std::string nodes =
          v == 0 && value.nodes.size() > fleet_names_shown
              ? fmt::format("{} nodes", value.nodes.size())
              : fmt::format("{} ({})", node_names(fleet, value.nodes, fleet_names_shown), value.nodes.size());
      out += "<tr>" + td(v == 0 ? setting.setting : "") + td(shown) + td(nodes, v == 0 ? "" : "fail") + "</tr>\n";
    }
  return out + "</table>\n";
}

std::string figures_html(const FleetInput& fleet, const FleetVerdict& verdict) {
  std::string out =
      "<h2>Fleet figures per probe</h2>\n<p>Per figure: the nodes with it, the fleet median and MAD of the nodes' "
      "figures (for a per-GPU figure each node's median GPU), the limit past which a node fails, the worst and "
      "best node, and the nodes past the limit.</p>\n";
  for (const auto& [probe, figures] : figures_per_probe(fleet)) {
    out += fmt::format(
        "<details class=\"probe\" id=\"fleet-{}\">\n<summary><strong>{}</strong> ({} figures): {}</summary>\n",
        xml_escape(probe), xml_escape(probe), figures.size(), xml_escape(probe_meaning(probe)));
    out +=
        "<table>\n<tr><th>figure</th><th>unit</th><th>nodes</th><th>median</th><th>MAD</th><th>limit</th><th>worst</th>"
        "<th>best</th><th>past the limit</th></tr>\n";
    for (const std::uint32_t f : figures) {
      const FleetFigure& figure = fleet.figures[f];
      const FigureVerdict& judged = verdict.figures[f];
      std::string name =
          figure.name + (figure.labels.empty() ? "" : " [" + figure.labels + "]") + (figure.per_gpu ? " per GPU" : "");
      if (judged.disturbed) name += fmt::format(" ({} disturbed, not judged)", judged.disturbed);
      out += "<tr>" + td(name) + td(figure.unit) + td(std::to_string(judged.nodes.count), "num") +
             td(format_figure(judged.nodes.median), "num") + td(format_figure(judged.nodes.mad), "num") +
             td(judged.not_judged.empty() ? format_figure(judged.nodes.limit) : "not judged: " + judged.not_judged,
                "num") +
             td(format_figure(judged.worst), "num") + td(format_figure(judged.best), "num") +
             td(judged.outlier_nodes.empty() ? "-" : node_names(fleet, judged.outlier_nodes, fleet_names_shown),
                judged.outlier_nodes.empty() ? "" : "fail") +
             "</tr>\n";
    }
    out += "</table>\n</details>\n";
  }
  return out;
}

std::string skipped_html(const FleetInput& fleet) {
  if (fleet.skipped.empty()) return "";
  std::string out = fmt::format(
      "<details class=\"skipped\" open>\n<summary><strong>Skipped inputs</strong>: {} not judged</summary>\n<ul>\n",
      fleet.skipped.size());
  for (const auto& skipped : fleet.skipped)
    out += "<li><code>" + xml_escape(skipped.path) + "</code>: " + xml_escape(skipped.reason) + "</li>\n";
  return out + "</ul>\n</details>\n";
}

}  // namespace

std::string render_fleet_html(const FleetInput& fleet, const FleetVerdict& verdict) {
  std::string out = html_page_head("nodeaudit fleet report") + "<h1>nodeaudit fleet report</h1>\n";
  out += fmt::format("<p>{} nodes judged against each other; {} inputs skipped.</p>\n<p>{}</p>\n", fleet.nodes.size(),
                     fleet.skipped.size(), xml_escape(fleet_rules_text(verdict.options)));
  for (const auto& note : verdict.provenance)
    out += "<p class=\"mixed\"><strong>Mixed results:</strong> " + xml_escape(note) + "</p>\n";
  out += failing_html(fleet, verdict) + gpus_html(fleet, verdict) + drift_html(fleet, verdict) +
         figures_html(fleet, verdict) + skipped_html(fleet);
  return out + "</body>\n</html>\n";
}

}  // namespace nodeaudit::report
