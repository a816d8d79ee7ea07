// The terminal rendering of results: one block per probe, a row per metric with its unit.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeaudit {

// "12.3", "0.0123", "1,230,000": format_number (units.hpp), three significant figures, no exponent.
std::string format_figure(double value);

// One line: id, status, duration, reason.
std::string render_probe_status(const nlohmann::json& probe);
// One probe's block: status line, metrics (median, spread, n), findings.
std::string render_probe(const nlohmann::json& probe);
// Skipped probes sharing one reason, so the reason is said once ("13 probes skipped: no NVIDIA
// driver (libnvidia-ml.so.1 not found)") however many probes it stopped.
struct SkipGroup {
  std::string reason;
  std::vector<std::string> probe_ids;
};
// The skipped probes of a result document, grouped by reason in the order each reason first appears.
std::vector<SkipGroup> group_skipped(const nlohmann::json& doc);
// "<n> probes skipped: <reason>" and the ids on the lines below, each line starting with `indent`.
std::string render_skip_groups(const std::vector<SkipGroup>& groups, const std::string& indent);
// "probes: 8 ok, 13 skipped".
std::string render_status_counts(const nlohmann::json& doc);
// Every probe that ran (status line, metrics, findings), then the skipped ones grouped by reason,
// then the status counts.
std::string render_result_table(const nlohmann::json& doc);

}  // namespace nodeaudit
