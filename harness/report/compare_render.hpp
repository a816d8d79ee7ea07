// The printers of a Comparison: Markdown (also what `compare` prints) and JUnit XML, one testcase
// per paired metric, so a CI job shows each figure that regressed as a failed test.
#pragma once

#include <string>

#include "harness/report/compare.hpp"

namespace nodeaudit::report {

std::string render_compare_markdown(const Comparison& comparison);
std::string render_compare_junit(const Comparison& comparison);

}  // namespace nodeaudit::report
