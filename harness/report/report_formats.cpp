#include "harness/report/report_formats.hpp"

namespace nodeaudit::report {

// Each format's renderer, defined in its own file.
std::string render_report_markdown(const Report& report);  // report_markdown.cpp
std::string render_report_html(const Report& report);      // report_html.cpp

const std::vector<ReportFormat>& report_formats() {
  static const std::vector<ReportFormat> formats{
      {"--md", "Write the Markdown report to FILE (must not exist)", render_report_markdown},
      {"--html", "Write a self-contained HTML report with SVG charts to FILE (must not exist)", render_report_html},
  };
  return formats;
}

}  // namespace nodeaudit::report
