// Inline SVG for the HTML report: grouped bars and log-x line charts, no scripts, no fonts, no
// external references. Every chart is an <svg class="chart" id="..."> with a <title>.
#pragma once

#include <string>

#include "harness/report/chart_data.hpp"

namespace nodeaudit::report {

std::string render_bar_chart(const BarChart& chart);
std::string render_line_chart(const LineChart& chart);

// A round axis maximum at or above `value` (1, 2, 2.5, 5 x 10^k); 1 for non-positive input.
double nice_axis_max(double value);

}  // namespace nodeaudit::report
