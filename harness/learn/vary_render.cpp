// `learn --vary`'s report for the terminal and as Markdown: per value the step time, samples/s,
// data-wait share, the job's CPU and (on a GPU node) its peak GPU memory, each a median with its
// range over the repeats; the verdict against the baseline; the best value and its gain; the
// command that reproduces each value's run, the best value's profile, the cost of one run before and
// after, and the optimize-or-upgrade line.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/units.hpp"
#include "harness/learn/vary_detail.hpp"
#include "harness/report/text_escape.hpp"

namespace nodeaudit::learn {

namespace detail {

namespace {

std::string range_text(const std::vector<double>& values, double scale, const char* format, const char* suffix) {
  if (values.empty()) return "-";
  const Spread s = spread_of(values);
  const auto one = [&](double x) { return fmt::format(fmt::runtime(format), scale * x); };
  if (s.count == 1) return one(s.median) + suffix;
  return fmt::format("{}{} ({} to {})", one(s.median), suffix, one(s.min), one(s.max));
}

// A figure with a unit scaled to it (format_quantity): "112 ms (98.1 ms to 130 ms)".
std::string quantity_range(const std::vector<double>& values, const char* unit) {
  if (values.empty()) return "-";
  const Spread s = spread_of(values);
  if (s.count == 1) return format_quantity(s.median, unit);
  return fmt::format("{} ({} to {})", format_quantity(s.median, unit), format_quantity(s.min, unit), format_quantity(s.max, unit));
}

}  // namespace

bool any_gpu_figure(const VaryReport& r) {
  return std::any_of(r.values.begin(), r.values.end(), [](const VaryValue& v) { return !v.gpu_peak_bytes.empty() || !v.gpu_util_pct.empty(); });
}

std::vector<VaryRow> vary_rows(const VaryReport& r) {
  std::vector<VaryRow> out;
  const VaryValue* base = find_value(r, r.baseline);
  for (const auto& v : r.values) {
    std::string verdict = v.verdict;
    if (v.verdict != "baseline" && !v.statistic.empty() && base)
      verdict += fmt::format(" ({}: {})", r.setting.per_sample_rate() ? "samples/s" : "step time", v.statistic);
    for (const auto& f : v.failures) verdict += "; failed " + f;
    const std::string peak = v.gpu_peak_bytes.empty() ? "-" : format_bytes(spread_of(v.gpu_peak_bytes).median);
    const std::string gpu = range_text(v.gpu_util_pct, 1, "{:.0f}", "%") + ", " + peak;
    out.push_back({v.value, quantity_range(v.step_time_s, "s"), quantity_range(v.samples_per_s, "count"),
                   range_text(v.data_wait_share, 100, "{:.1f}", "%"), range_text(v.cpu_cores, 1, "{:.2f}", ""), gpu, verdict});
  }
  return out;
}

std::string figures_sentence() {
  return "Per run, step time is its median measured step and samples/s all ranks' samples over its measured steps' time (the "
         "mean step, so not the batch over the median step); each figure is the median over the repeats, with their range";
}

std::string baseline_sentence(const VaryReport& r) {
  const std::string own = r.own_value ? r.setting.name + "=" + *r.own_value : "";
  if (r.setting.data_dir()) return fmt::format("verdicts against the job's own data directory, {}", r.baseline);
  if (r.own_value && *r.own_value == r.baseline) return fmt::format("verdicts against the job's own setting, {}", own);
  if (r.own_value)
    return fmt::format("verdicts against the first value, {}={} (the job's own setting, {}, is not among the values)", r.setting.name, r.baseline, own);
  return fmt::format("verdicts against the first value, {}={} ({} is not set in the job's environment)", r.setting.name, r.baseline, r.setting.env_name);
}

std::string best_sentence(const VaryReport& r) {
  if (!r.best) return "best: not judged (a value has no successful run)";
  const VaryValue* best = find_value(r, *r.best);
  if (*r.best == r.baseline) return fmt::format("best: {}={}, the baseline itself: no other value was faster", r.setting.name, *r.best);
  return fmt::format("best: {}={}, {:+.1f}% {} against {}={}: {}", r.setting.name, *r.best,
                     100 * (r.setting.per_sample_rate() ? best->gain : -best->gain), r.setting.per_sample_rate() ? "samples/s" : "step time",
                     r.setting.name, r.baseline, best->verdict);
}

std::vector<std::string> cost_lines(const VaryReport& r) {
  if (!r.price_per_hour) return {};
  std::vector<std::string> out;
  for (const std::string& value : {r.baseline, r.best.value_or(r.baseline)}) {
    const VaryValue* v = find_value(r, value);
    const auto hours = v ? run_hours(*v) : std::nullopt;
    const std::string label = value == r.baseline ? "before" : "after";
    if (label == "after" && v && v->verdict != "better") {
      // A cost "after" is a claim that the change saves something; the rule did not find it does.
      out.push_back(fmt::format("cost of one run after ({}={}): not given: its verdict is {}, so no saving is shown", r.setting.name, value,
                                v->verdict));
    } else if (!hours) {
      out.push_back(fmt::format("cost of one run {} ({}={}): not known (no samples/s or target_samples learned)", label, r.setting.name, value));
    } else {
      out.push_back(fmt::format("cost of one run {} ({}={}): {} = {} per hour x {} h ({} target samples, the learned profile's "
                                "target_samples{}, at {} samples/s)",
                                label, r.setting.name, value, format_number(*run_cost(r, *v)), format_number(*r.price_per_hour),
                                format_number(*hours), format_number(v->target_samples),
                                v->target_samples_how.empty() ? "" : ": " + v->target_samples_how,
                                format_number(spread_of(v->samples_per_s).median)));
    }
    if (value == r.best.value_or(r.baseline) && value == r.baseline) break;
  }
  return out;
}

}  // namespace detail

using namespace detail;

std::string render_vary(const VaryReport& r, const std::string& command_text) {
  std::string out = fmt::format("\nvaried {} over {} ({} repeat(s) each, in a random order per repeat, after a warm-up run not counted) in `{}`; {}\n", r.setting.name,
                                fmt::join(r.setting.values, ", "), r.repeats, command_text, baseline_sentence(r));
  const bool gpu = any_gpu_figure(r);
  out += fmt::format("  {:<8} {:<28} {:<24} {:<22} {:<20} {}{}\n", "value", "step time (range)", "samples/s", "data wait", "CPU cores",
                     gpu ? fmt::format("{:<30} ", "GPU util (range), peak") : "", "verdict");
  for (const auto& row : vary_rows(r))
    out += fmt::format("  {:<8} {:<28} {:<24} {:<22} {:<20} {}{}\n", row.value, row.step_time, row.samples_per_s, row.wait, row.cpu,
                       gpu ? fmt::format("{:<30} ", row.gpu) : "", row.verdict);
  out += "  " + figures_sentence() + ".\n" + best_sentence(r) + "\n";
  for (const auto& v : r.values) out += fmt::format("reproduce {}={}: {}\n", r.setting.name, v.value, v.command);
  if (!r.best_profile_path.empty()) out += fmt::format("profile of the best value: {}\n", r.best_profile_path);
  for (const auto& line : cost_lines(r)) out += line + "\n";
  if (!r.advice.empty()) out += r.advice + "\n";
  return out;
}

std::string render_vary_markdown(const VaryReport& r, const std::string& command_text) {
  std::string out = fmt::format("# {} varied in `{}`\n\n{} repeat(s) of each value, each repeat in a random order, after a warm-up run not counted; {}.\n\n", r.setting.name, command_text,
                                r.repeats, baseline_sentence(r));
  const bool gpu = any_gpu_figure(r);
  out += fmt::format("| value | step time (range) | samples/s (range) | data wait (range) | CPU cores (range) |{} verdict |\n", gpu ? " GPU utilization (range), peak allocated |" : "");
  out += gpu ? "|---|---|---|---|---|---|---|\n" : "|---|---|---|---|---|---|\n";
  const auto cell = [](const std::string& text) { return report::markdown_cell(text); };
  for (const auto& row : vary_rows(r))
    out += fmt::format("| {} | {} | {} | {} | {} |{} {} |\n", cell(row.value), row.step_time, row.samples_per_s, row.wait, row.cpu,
                       gpu ? " " + row.gpu + " |" : "", cell(row.verdict));
  out += "\n" + figures_sentence() + ".\n\n" + best_sentence(r) + ".\n\n## Reproduce\n\n";
  for (const auto& v : r.values) out += fmt::format("- {}={}: `{}`\n", r.setting.name, v.value, v.command);
  if (!r.best_profile_path.empty()) out += fmt::format("\nThe best value's learned profile: `{}`.\n", r.best_profile_path);
  const auto costs = cost_lines(r);
  if (!costs.empty()) out += "\n## Cost of one run\n\n";
  for (const auto& line : costs) out += "- " + line + "\n";
  if (!r.advice.empty()) out += "\n## Optimize or upgrade\n\n" + r.advice + "\n";
  return out;
}

}  // namespace nodeaudit::learn
