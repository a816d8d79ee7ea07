#include "harness/core/table.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/core/figure_info.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/units.hpp"

namespace nodeaudit {

std::string format_figure(double value) { return format_number(value); }

namespace {

std::string metric_label(const nlohmann::json& m) {
  std::string name = m.value("name", "?");
  const auto& labels = m.value("labels", nlohmann::json::object());
  if (labels.empty()) return name;
  std::string inner;
  for (const auto& [k, v] : labels.items()) {
    if (!inner.empty()) inner += ",";
    inner += k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return name + " [" + inner + "]";
}

// With rounds: the range of the rounds' medians and its size relative to their median, the
// between-run noise `compare` will use for this figure.
std::string round_spread_text(const nlohmann::json& m) {
  if (!m.contains("round_medians") || m["round_medians"].size() < 2) return "";
  const auto medians = m["round_medians"].get<std::vector<double>>();
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  const double centre = percentile(medians, 0.5);
  const double spread_pct = centre != 0 ? (*hi - *lo) / std::fabs(centre) * 100.0 : 0.0;
  return fmt::format(" rounds {}..{} ({:.1f}%)", format_figure(*lo), format_figure(*hi), spread_pct);
}

std::string metric_row(const std::string& probe_id, const nlohmann::json& m) {
  const std::string unit = figure_info(probe_id, m).unit;
  const auto n = m.value("n", 0);
  if (n <= 1) return fmt::format("    {:<44} {:>12} {}\n", metric_label(m), format_figure(m.value("median", 0.0)), unit);
  return fmt::format("    {:<44} {:>12} {:<9} min {} max {} cv {:.1f}% n={}{}\n", metric_label(m),
                     format_figure(m.value("median", 0.0)), unit, format_figure(m.value("min", 0.0)),
                     format_figure(m.value("max", 0.0)), 100.0 * m.value("cv", 0.0), n, round_spread_text(m));
}

}  // namespace

std::string render_probe_status(const nlohmann::json& probe) {
  std::string out = fmt::format("{:<26} {:<11} {:>8.1f} s", probe.value("id", "?"), probe.value("status", "?"),
                                probe.value("duration_s", 0.0));
  const std::string reason = probe.value("reason", "");
  if (!reason.empty()) out += "  " + reason;
  return out + "\n";
}

namespace {

// How the figures below were measured when there were rounds: how many, and the share of the
// level's work each measured (the quick level splits it; standard and soak give each all of it).
std::string rounds_line(const nlohmann::json& probe) {
  const int rounds = probe.value("rounds", 1);
  if (rounds <= 1) return "";
  const double share = probe.value("round_work_share", 1.0);
  const std::string each = share < 1.0 ? fmt::format("1/{:.0f} of the level's work", 1.0 / share) : "the level's whole work";
  return fmt::format("    measured in {} interleaved rounds, each {}\n", rounds, each);
}

}  // namespace

std::string render_probe(const nlohmann::json& probe) {
  std::string out = render_probe_status(probe) + rounds_line(probe);
  for (const auto& m : probe.value("metrics", nlohmann::json::array())) out += metric_row(probe.value("id", ""), m);
  for (const auto& f : probe.value("findings", nlohmann::json::array()))
    out += fmt::format("    {:<5} {}: {}\n", f.value("severity", "?"), f.value("code", "?"), f.value("message", ""));
  return out;
}

std::vector<SkipGroup> group_skipped(const nlohmann::json& doc) {
  std::vector<SkipGroup> groups;
  for (const auto& p : doc.value("probes", nlohmann::json::array())) {
    if (p.value("status", "") != "skipped") continue;
    const std::string reason = p.value("reason", "");
    auto group = std::find_if(groups.begin(), groups.end(), [&](const SkipGroup& g) { return g.reason == reason; });
    if (group == groups.end()) group = groups.insert(groups.end(), SkipGroup{reason, {}});
    group->probe_ids.push_back(p.value("id", "?"));
  }
  return groups;
}

std::string render_skip_groups(const std::vector<SkipGroup>& groups, const std::string& indent) {
  constexpr std::size_t line_width = 100;
  std::string out;
  for (const SkipGroup& g : groups) {
    const std::size_t n = g.probe_ids.size();
    out += fmt::format("{}{} probe{} skipped: {}\n", indent, n, n == 1 ? "" : "s", g.reason.empty() ? "no reason given" : g.reason);
    std::string line = indent + "    ";
    for (std::size_t i = 0; i < n; ++i) {
      const std::string item = g.probe_ids[i] + (i + 1 < n ? "," : "");
      if (line.size() + item.size() + 1 > line_width && line.size() > indent.size() + 4) {
        out += line + "\n";
        line = indent + "    ";
      }
      line += (line.size() > indent.size() + 4 ? " " : "") + item;
    }
    out += line + "\n";
  }
  return out;
}

std::string render_status_counts(const nlohmann::json& doc) {
  std::map<std::string, int> counts;
  for (const auto& p : doc.value("probes", nlohmann::json::array())) ++counts[p.value("status", "?")];
  std::string summary;
  for (const auto& [status, n] : counts) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, status);
  return fmt::format("probes: {}\n", summary.empty() ? "none" : summary);
}

std::string render_result_table(const nlohmann::json& doc) {
  std::string out;
  for (const auto& p : doc.value("probes", nlohmann::json::array()))
    if (p.value("status", "") != "skipped") out += render_probe(p);
  return out + render_skip_groups(group_skipped(doc), "") + render_status_counts(doc);
}

}  // namespace nodeaudit
