#include "table.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

namespace nodeaudit {

std::string format_figure(double value) {
  if (value == 0) return "0";
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e6 || magnitude < 1e-3) return fmt::format("{:.3e}", value);
  if (magnitude >= 1000) return fmt::format("{:.0f}", value);
  if (magnitude >= 100) return fmt::format("{:.1f}", value);
  if (magnitude >= 10) return fmt::format("{:.2f}", value);
  if (magnitude >= 1) return fmt::format("{:.3f}", value);
  return fmt::format("{:.4f}", value);
}

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

std::string metric_row(const nlohmann::json& m) {
  const std::string unit = m.value("unit", "");
  const auto n = m.value("n", 0);
  if (n <= 1) return fmt::format("    {:<44} {:>12} {}\n", metric_label(m), format_figure(m.value("median", 0.0)), unit);
  return fmt::format("    {:<44} {:>12} {:<9} min {} max {} cv {:.1f}% n={}\n", metric_label(m),
                     format_figure(m.value("median", 0.0)), unit, format_figure(m.value("min", 0.0)),
                     format_figure(m.value("max", 0.0)), 100.0 * m.value("cv", 0.0), n);
}

}  // namespace

std::string render_probe_status(const nlohmann::json& probe) {
  std::string out = fmt::format("{:<26} {:<11} {:>8.1f} s", probe.value("id", "?"), probe.value("status", "?"),
                                probe.value("duration_s", 0.0));
  const std::string reason = probe.value("reason", "");
  if (!reason.empty()) out += "  " + reason;
  return out + "\n";
}

std::string render_probe(const nlohmann::json& probe) {
  std::string out = render_probe_status(probe);
  for (const auto& m : probe.value("metrics", nlohmann::json::array())) out += metric_row(m);
  for (const auto& f : probe.value("findings", nlohmann::json::array()))
    out += fmt::format("    {:<5} {}: {}\n", f.value("severity", "?"), f.value("code", "?"), f.value("message", ""));
  return out;
}

std::string render_result_table(const nlohmann::json& doc) {
  std::string out;
  std::map<std::string, int> counts;
  for (const auto& p : doc.value("probes", nlohmann::json::array())) {
    out += render_probe(p);
    ++counts[p.value("status", "?")];
  }
  std::string summary;
  for (const auto& [status, n] : counts) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, status);
  out += fmt::format("probes: {}\n", summary.empty() ? "none" : summary);
  return out;
}

}  // namespace nodeaudit
