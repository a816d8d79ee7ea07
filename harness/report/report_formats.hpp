// The vendor report's file formats as data, one row each: the option that names the file, its help
// text, and the function of the report that writes it. Every renderer receives the same Report (as
// reporters do in Google Benchmark); `nodeaudit report` declares one option per row and writes each
// file asked for. A new format is its renderer's file, its row in report_formats.cpp (where its
// function is declared) and its line in this folder's CMakeLists.txt.
#pragma once

#include <string>
#include <vector>

#include "harness/report/report_model.hpp"

namespace nodeaudit::report {

struct ReportFormat {
  std::string option;  // "--md"
  std::string help;
  std::string (*render)(const Report& report);
};

const std::vector<ReportFormat>& report_formats();

}  // namespace nodeaudit::report
