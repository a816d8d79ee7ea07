// node_exporter textfile-collector output: one gauge family per probe metric,
//   nodeaudit_<probe>_<metric>{gpu="0",...} <median>
// with HELP (unit, direction, what the value is) and TYPE lines, plus per-probe status and duration.
// Names and label names are sanitized to [a-zA-Z_][a-zA-Z0-9_]*; label values are escaped.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace nodeaudit::report {

// First line of every file we write; write_prometheus_textfile uses it to recognise its own files.
inline constexpr const char* prometheus_header = "# nodeaudit textfile-collector metrics";

std::string render_prometheus(const nlohmann::json& doc);

// "gpu.memory-bandwidth" + "bandwidth" -> "nodeaudit_gpu_memory_bandwidth_bandwidth".
std::string prometheus_metric_name(const std::string& probe, const std::string& metric);

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
