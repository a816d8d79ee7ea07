// `learn --vary`'s report, for the terminal and as Markdown: per value the step time (or samples/s
// for batch_size) median and range over the repeats, the data-wait share and the job's CPU, the
// verdict against the first value, the best value, and the command that reproduces one run.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "stats.hpp"

#include "vary.hpp"

namespace nodeaudit::learn {

namespace {

struct Row {
  std::string value, figure, wait, cpu, verdict;
};

std::string figure_text(const VaryReport& r, const VaryValue& v) {
  if (v.figure_median <= 0) return "no run";
  if (r.setting.per_sample_rate())
    return fmt::format("{:.4g} samples/s ({:.4g} to {:.4g})", v.figure_median, v.figure_min, v.figure_max);
  return fmt::format("{:.2f} ms ({:.2f} to {:.2f})", 1e3 * v.figure_median, 1e3 * v.figure_min, 1e3 * v.figure_max);
}

std::vector<Row> rows(const VaryReport& r) {
  std::vector<Row> out;
  for (const auto& v : r.values) {
    std::string verdict = v.verdict;
    if (v.verdict != "baseline" && v.figure_median > 0 && r.values.front().figure_median > 0)
      verdict += fmt::format(" ({:+.1f}%)", 100 * v.gain);
    for (const auto& f : v.failures) verdict += "; failed " + f;
    out.push_back({v.value, figure_text(r, v), v.data_wait_share.empty() ? "-" : fmt::format("{:.1f}%", 100 * median_or_nan(v.data_wait_share)),
                   v.cpu_cores.empty() ? "-" : fmt::format("{:.2f}", median_or_nan(v.cpu_cores)), verdict});
  }
  return out;
}

std::string reproduce(const VaryReport& r, const std::string& command_text) {
  const std::string value = r.best.value_or("<value>");
  if (!r.setting.env_name.empty()) return fmt::format("{}={} {}", r.setting.env_name, value, command_text);
  return fmt::format("set {}={} in the job's DataLoader, then {}", r.setting.name, value, command_text);
}

}  // namespace

std::string render_vary(const VaryReport& r, const std::string& command_text) {
  std::string out = fmt::format("\nvaried {} over {} ({} repeat(s) each, interleaved) in `{}`\n", r.setting.name,
                                fmt::join(r.setting.values, ", "), r.repeats, command_text);
  out += fmt::format("  {:<10} {:<34} {:>10} {:>10}  {}\n", "value", r.setting.per_sample_rate() ? "samples/s (range)" : "step time (range)",
                     "data wait", "CPU cores", "against " + r.setting.values.front());
  for (const auto& row : rows(r)) out += fmt::format("  {:<10} {:<34} {:>10} {:>10}  {}\n", row.value, row.figure, row.wait, row.cpu, row.verdict);
  if (r.best) out += fmt::format("best: {}={}\n", r.setting.name, *r.best);
  out += "reproduce the best run: " + reproduce(r, command_text) + "\n";
  return out;
}

std::string render_vary_markdown(const VaryReport& r, const std::string& command_text) {
  std::string out = fmt::format("# {} varied in `{}`\n\n{} repeat(s) of each value, interleaved; verdicts against {}={}.\n\n",
                                r.setting.name, command_text, r.repeats, r.setting.name, r.setting.values.front());
  out += fmt::format("| value | {} | data wait | CPU cores | verdict |\n|---|---|---|---|---|\n",
                     r.setting.per_sample_rate() ? "samples/s (range)" : "step time (range)");
  for (const auto& row : rows(r)) out += fmt::format("| {} | {} | {} | {} | {} |\n", row.value, row.figure, row.wait, row.cpu, row.verdict);
  if (r.best) out += fmt::format("\nBest: `{}={}`.\n", r.setting.name, *r.best);
  out += "\nReproduce the best run: `" + reproduce(r, command_text) + "`\n";
  return out;
}

}  // namespace nodeaudit::learn
