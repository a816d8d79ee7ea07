// The vendor comparison as one self-contained HTML file: inline CSS, inline SVG charts, one small
// inline script that marks the body with how many charts drew (data-charts-rendered), and a
// Content-Security-Policy that forbids loading anything from anywhere.
#pragma once

#include <string>

#include "harness/report/report_model.hpp"

namespace nodeaudit::report {

std::string render_report_html(const Report& report);
// The document up to <body>: the CSP, the title and the shared style sheet (the fleet report's too).
std::string html_page_head(const std::string& title);

}  // namespace nodeaudit::report
