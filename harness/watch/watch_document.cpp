#include "harness/watch/watch_document.hpp"

#include <cmath>

#include <fmt/format.h>

#include "harness/core/result.hpp"
#include "harness/core/units.hpp"

namespace nodeaudit::watch {

nlohmann::json watch_probe_entry(const WatchSeries& series, const Diagnosis& diagnosis, const WatchRun& run) {
  Outcome outcome = Outcome::ok();
  if (run.ended_by == "interrupted")
    outcome = {Status::interrupted, fmt::format("interrupted after {} of {}; the diagnosis covers the {} samples collected",
                                                format_duration(run.wall_s), format_duration(run.requested_duration_s), series.size())};
  const nlohmann::json params = {{"duration_s", run.requested_duration_s}, {"interval_s", run.interval_s},
                                 {"pid", run.pid ? nlohmann::json(*run.pid) : nlohmann::json(nullptr)}};
  std::vector<Finding> findings;
  nlohmann::json detail = nlohmann::json::array();
  for (const auto& f : diagnosis.findings) {
    findings.push_back(to_finding(f));
    detail.push_back({{"code", f.code}, {"severity", to_string(f.severity)},
                      {"gpu", f.gpu < 0 ? nlohmann::json(nullptr) : nlohmann::json(f.gpu)},
                      {"headline", f.headline}, {"action", f.action}, {"evidence", f.evidence}});
  }
  const nlohmann::json info = {{"summary", diagnosis.summary}, {"ended_by", run.ended_by}, {"samples", series.size()},
                               {"gpu_series", !series.gpus.empty()}, {"diagnosis", detail}, {"series", series_to_json(series)}};
  nlohmann::json entry = probe_entry({.id = watch_probe_id,
                                      .outcome = outcome,
                                      .params = params,
                                      .duration_s = run.wall_s,
                                      .metrics = diagnosis.metrics,
                                      .findings = findings,
                                      .info = info});
  entry["telemetry"] = summarize_telemetry(series.rows(), series.interval_s, series.gpus.empty() ? series.gpu_note : "");
  return entry;
}

namespace {
double last(const WatchSeries& s, const std::string& name) {
  const auto& c = s.column(name);
  return c.empty() ? NAN : c.back();
}
double sum_last(const WatchSeries& s, const std::string& prefix, const std::string& suffix) {
  double total = 0;
  for (const auto& name : s.names_like(prefix, suffix))
    if (name != "net.lo" + suffix && std::isfinite(last(s, name))) total += last(s, name);
  return total;
}
}  // namespace

std::string status_line(const WatchSeries& s, double requested_duration_s) {
  std::string line = fmt::format("{} / {}", format_duration(s.t_s.empty() ? 0 : s.t_s.back()), format_duration(requested_duration_s));
  if (!s.gpus.empty()) {
    line += " | GPU util";
    for (const auto& g : s.gpus) line += fmt::format(" {:.0f}", last(s, fmt::format("gpu{}.util_pct", g.index)));
    line += " %";
  }
  line += fmt::format(" | CPU {:.0f}% iowait {:.0f}%", last(s, "cpu_busy_pct"), last(s, "cpu_iowait_pct"));
  line += fmt::format(" | disk rd {:.2f} GB/s | net rx {:.2f} GB/s", sum_last(s, "disk.", ".read_bytes_per_s") / 1e9,
                      sum_last(s, "net.", ".rx_bytes_per_s") / 1e9);
  if (s.pid) line += fmt::format(" | pid {} {:.0f}% CPU", *s.pid, last(s, "proc.cpu_pct"));
  return line;
}

std::string render_diagnosis(const Diagnosis& d) {
  std::string out;
  for (const auto& f : d.findings) {
    out += fmt::format("  [{}] {} {}\n", to_string(f.severity), f.code, f.headline);
    if (!f.action.empty()) out += "         action: " + f.action + "\n";
  }
  return out + "\n" + d.summary + "\n";
}

}  // namespace nodeaudit::watch
