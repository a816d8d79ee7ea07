#include <map>

#include <fmt/format.h>

#include "harness/core/probe_catalogue.hpp"
#include "harness/core/table.hpp"
#include "harness/report/fleet_render.hpp"
#include "harness/report/text_escape.hpp"

namespace nodeaudit::report {

namespace {

constexpr std::size_t reasons_shown = 6;

std::string quoted(const std::string& value) {
  return value.empty() ? "not recorded" : "`" + value + "`";
}

std::string failing_section(const FleetInput& fleet, const FleetVerdict& verdict) {
  std::string out = "## Verdict: " + fleet_headline(fleet, verdict) + "\n\n";
  if (verdict.failed_nodes == 0) return out;
  std::vector<std::size_t> order;
  for (std::size_t n = 0; n < fleet.nodes.size(); ++n)
    if (!verdict.reasons[n].empty()) order.push_back(n);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return fleet.nodes[a].name < fleet.nodes[b].name; });
  out += "| node | why it fails |\n|---|---|\n";
  for (const std::size_t n : order) {
    const auto& reasons = verdict.reasons[n];
    std::string text;
    for (std::size_t i = 0; i < reasons.size() && i < reasons_shown; ++i) text += (i ? "; " : "") + reasons[i];
    if (reasons.size() > reasons_shown) text += fmt::format("; and {} more", reasons.size() - reasons_shown);
    out += fmt::format("| {} | {} |\n", markdown_cell(fleet.nodes[n].name), markdown_cell(text));
  }
  return out + "\n";
}

std::string gpu_section(const FleetInput& fleet, const FleetVerdict& verdict) {
  if (verdict.gpu_outliers.empty()) return "";
  std::string out = fmt::format(
      "## Outlier GPUs\n\n{} GPU figure{} past a limit.\n\n| node | GPU | figure | value | node's best GPU "
      "| fleet's GPU median |\n|---|---|---|---|---|---|\n",
      verdict.gpu_outliers.size(), verdict.gpu_outliers.size() == 1 ? "" : "s");
  for (const auto& outlier : verdict.gpu_outliers) {
    const FleetFigure& figure = fleet.figures[outlier.figure];
    out +=
        fmt::format("| {} | {} | {} | {} {} | {} | {} |\n", markdown_cell(fleet.nodes[outlier.node].name), outlier.gpu,
                    markdown_cell(figure.display()), format_figure(outlier.value), markdown_cell(figure.unit),
                    outlier.node_best ? "**" + format_figure(*outlier.node_best) + "**" : "within limit",
                    outlier.fleet_median ? "**" + format_figure(*outlier.fleet_median) + "**" : "within limit");
  }
  return out + "\n";
}

std::string drift_section(const FleetInput& fleet, const FleetVerdict& verdict) {
  std::string out = "## Configuration drift\n\n";
  if (verdict.drift.empty())
    return out +
           "Every node records the same driver, CUDA, NCCL, kernel, firmware, GPU settings and check findings.\n\n";
  out += fmt::format(
      "{} setting{} across the nodes (most common value first):\n\n| setting | value | nodes |\n|---|---|---|\n",
      verdict.drift.size(), verdict.drift.size() == 1 ? " differs" : "s differ");
  for (const auto& setting : verdict.drift)
    for (std::size_t v = 0; v < setting.values.size(); ++v) {
      const DriftValue& value = setting.values[v];
      const std::string shown = quoted(value.value) + (value.example.empty() ? "" : ": " + value.example);
      const std::string nodes =
          v == 0 && value.nodes.size() > fleet_names_shown
              ? fmt::format("{} nodes", value.nodes.size())
              : fmt::format("{} ({})", node_names(fleet, value.nodes, fleet_names_shown), value.nodes.size());
      out += fmt::format("| {} | {} | {} |\n", v == 0 ? markdown_cell(setting.setting) : "", markdown_cell(shown),
                         markdown_cell(nodes));
    }
  return out + "\n";
}

std::string figures_section(const FleetInput& fleet, const FleetVerdict& verdict) {
  std::string out =
      "## Fleet figures per probe\n\nPer figure: the nodes with it, the fleet median and MAD of the nodes' figures "
      "(for a "
      "per-GPU figure each node's median GPU), the limit past which a node fails, the worst and best node, and "
      "the nodes past the limit.\n\n";
  for (const auto& [probe, figures] : figures_per_probe(fleet)) {
    out += fmt::format(
        "### {} ({} figures)\n\n{}\n\n| figure | unit | nodes | median | MAD | limit | worst | best | past the limit "
        "|\n|---|---|---|---|---|---|---|---|---|\n",
        probe, figures.size(), probe_meaning(probe));
    for (const std::uint32_t f : figures) {
      const FleetFigure& figure = fleet.figures[f];
      const FigureVerdict& judged = verdict.figures[f];
      std::string name =
          figure.name + (figure.labels.empty() ? "" : " [" + figure.labels + "]") + (figure.per_gpu ? " per GPU" : "");
      if (judged.disturbed) name += fmt::format(" ({} disturbed, not judged)", judged.disturbed);
      const std::string limit =
          judged.not_judged.empty() ? format_figure(judged.nodes.limit) : "not judged: " + judged.not_judged;
      out += fmt::format(
          "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", markdown_cell(name), markdown_cell(figure.unit),
          judged.nodes.count, format_figure(judged.nodes.median), format_figure(judged.nodes.mad), markdown_cell(limit),
          format_figure(judged.worst), format_figure(judged.best),
          judged.outlier_nodes.empty() ? "-" : markdown_cell(node_names(fleet, judged.outlier_nodes, fleet_names_shown)));
    }
    out += "\n";
  }
  return out;
}

std::string skipped_section(const FleetInput& fleet) {
  if (fleet.skipped.empty()) return "";
  std::string out = fmt::format("## Skipped inputs\n\n{} input{} skipped, not judged:\n\n", fleet.skipped.size(),
                                fleet.skipped.size() == 1 ? "" : "s");
  for (const auto& skipped : fleet.skipped)
    out += fmt::format("- `{}`: {}\n", skipped.path, markdown_cell(skipped.reason));
  return out + "\n";
}

}  // namespace

std::string fleet_rules_text(const FleetOptions& o) {
  return fmt::format(
      "A node fails a figure when it is worse than the fleet median by more than {:g} scaled MADs (1.4826 x the median "
      "absolute deviation) and by more than {:g}% of the median; each GPU is judged the same way against all the "
      "fleet's "
      "GPUs, and fails when more than {:g}% below the best GPU of its node (higher-is-better figures). A failed, "
      "crashed "
      "or timed-out probe, or a `fail` finding, fails its node. Figures measured beside foreign load (disturbed) are "
      "shown, not judged; a figure fewer than {} nodes have is not judged. Configuration drift {}.",
      o.outlier_mad, o.outlier_floor_pct, o.gpu_below_best_pct, o.min_nodes,
      o.fail_on_drift ? "fails the nodes off the most common value (--fail-on-drift)"
                      : "is listed and fails no node (--fail-on-drift makes it)");
}

std::string fleet_headline(const FleetInput& fleet, const FleetVerdict& verdict) {
  if (verdict.failed_nodes == 0) return fmt::format("PASS: all {} nodes within the fleet's limits", fleet.nodes.size());
  return fmt::format("FAIL: {} of {} nodes fail", verdict.failed_nodes, fleet.nodes.size());
}

std::string node_names(const FleetInput& fleet, const std::vector<std::size_t>& nodes, std::size_t shown) {
  std::string text;
  for (std::size_t i = 0; i < nodes.size() && i < shown; ++i) text += (i ? ", " : "") + fleet.nodes[nodes[i]].name;
  if (nodes.size() > shown) text += fmt::format(" and {} more", nodes.size() - shown);
  return text;
}

std::vector<std::pair<std::string, std::vector<std::uint32_t>>> figures_per_probe(const FleetInput& fleet) {
  std::vector<std::pair<std::string, std::vector<std::uint32_t>>> groups;
  std::map<std::string, std::size_t> index;
  for (std::uint32_t f = 0; f < fleet.figures.size(); ++f) {
    const auto [it, added] = index.emplace(fleet.figures[f].probe, groups.size());
    if (added) groups.push_back({fleet.figures[f].probe, {}});
    groups[it->second].second.push_back(f);
  }
  return groups;
}

std::string render_fleet_markdown(const FleetInput& fleet, const FleetVerdict& verdict) {
  std::string out =
      fmt::format("# nodeaudit fleet report\n\n{} node{} judged against each other; {} input{} skipped{}.\n\n{}\n\n",
                  fleet.nodes.size(), fleet.nodes.size() == 1 ? "" : "s", fleet.skipped.size(),
                  fleet.skipped.size() == 1 ? "" : "s", fleet.skipped.empty() ? "" : " (listed at the end)",
                  fleet_rules_text(verdict.options));
  for (const auto& note : verdict.provenance) out += "- **Mixed results:** " + markdown_cell(note) + "\n";
  if (!verdict.provenance.empty()) out += "\n";
  return out + failing_section(fleet, verdict) + gpu_section(fleet, verdict) + drift_section(fleet, verdict) +
         figures_section(fleet, verdict) + skipped_section(fleet);
}

}  // namespace nodeaudit::report
