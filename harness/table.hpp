// The terminal rendering of results: one block per probe, a row per metric with its unit.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace nodeaudit {

// "12.3", "0.0123", "1.23e+06": four significant figures, no false precision.
std::string format_figure(double value);

// One line: id, status, duration, reason.
std::string render_probe_status(const nlohmann::json& probe);
// One probe's block: status line, metrics (median, spread, n), findings.
std::string render_probe(const nlohmann::json& probe);
// Every probe of a result document, then a status count line.
std::string render_result_table(const nlohmann::json& doc);

}  // namespace nodeaudit
