// The vendor comparison as Markdown: the scorecard first (harness/report/scorecard.hpp), the nodes,
// each node's assessment with the cheapest run named, then every figure grouped per probe.
#pragma once

#include <string>

#include "harness/report/report_model.hpp"

namespace nodeaudit::report {

std::string render_report_markdown(const Report& report);

// Shared by the Markdown and HTML printers.
std::string verdict_of(const NodeReport& node);     // "PASS", "WARN", ... or "not assessed"
std::string bottleneck_of(const NodeReport& node);  // the scorer's sentence, or ""
std::string cost_text(const NodeReport& node);      // "1234 (98.7 h)", or the reason there is none

}  // namespace nodeaudit::report
