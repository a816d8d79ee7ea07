// The vendor comparison as one self-contained HTML file: inline CSS, inline SVG charts, one small
// inline script that marks the body with how many charts drew (data-charts-rendered), and a
// Content-Security-Policy that forbids loading anything from anywhere.
#pragma once

#include <string>

#include "report_model.hpp"

namespace nodeaudit::report {

std::string render_report_html(const Report& report);

}  // namespace nodeaudit::report
