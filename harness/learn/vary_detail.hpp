// The report's rows and closing lines, shared by the terminal, Markdown and HTML renderings of
// `learn --vary` (vary_render.cpp, vary_html.cpp).
#pragma once

#include <string>
#include <vector>

#include "harness/learn/vary.hpp"

namespace nodeaudit::learn::detail {

struct VaryRow {
  std::string value, step_time, samples_per_s, wait, cpu, gpu, verdict;
};
std::vector<VaryRow> vary_rows(const VaryReport& r);
bool any_gpu_figure(const VaryReport& r);
// What each column's figure is: per run, then over the repeats.
std::string figures_sentence();
std::string baseline_sentence(const VaryReport& r);
// "best: num_workers=4, 23.1% less step time than the job's own setting (num_workers=2): better"
std::string best_sentence(const VaryReport& r);
// The cost of one run to the target samples, at the baseline and at the best value, with where the
// figures come from; empty without --price-per-hour.
std::vector<std::string> cost_lines(const VaryReport& r);

}  // namespace nodeaudit::learn::detail
