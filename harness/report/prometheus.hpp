// node_exporter textfile-collector output, in Prometheus's naming conventions (promtool check
// metrics accepts it): one gauge family per probe metric in base units,
//   nodeaudit_<probe>_<metric>_<base unit>{gpu="0",...} <median x scale>
// (prometheus_names.hpp), latency percentiles as the quantiles of one summary family, HELP naming
// the probe's metric and unit; per-probe status and duration; and, when the run was scored, the
// verdict, each rule's verdict and each expected-value grade as state sets (1 for the state reached).
// Names and label names are sanitized to [a-zA-Z_][a-zA-Z0-9_]*; label values are escaped.
// results/PROMETHEUS.md lists every name.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace nodeaudit::report {

// First line of every file we write; write_prometheus_textfile uses it to recognise its own files.
inline constexpr const char* prometheus_header = "# nodeaudit textfile-collector metrics";

std::string render_prometheus(const nlohmann::json& doc);

// Writes render_prometheus(result_doc) atomically (temp file + rename, so the collector never reads
// half a file). A textfile is by design replaced on every run, so an existing file is replaced,
// but only when it is ours (its first line is prometheus_header); any other file is refused with
// a UsageError, so a mistyped path never clobbers another exporter's file.
void write_prometheus_textfile(const nlohmann::json& result_doc, const std::string& path);

}  // namespace nodeaudit::report

namespace nodeaudit {
using report::render_prometheus;
using report::write_prometheus_textfile;
}  // namespace nodeaudit
