#include "vary.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "stats.hpp"
#include <fmt/ranges.h>

#include "errors.hpp"
#include "result.hpp"

namespace nodeaudit::learn {

using nlohmann::json;

namespace {

enum class Kind { count_from_zero, count_from_one, boolean };

const std::vector<std::pair<std::string, Kind>>& dataloader_settings() {
  static const std::vector<std::pair<std::string, Kind>> settings = {{"num_workers", Kind::count_from_zero},
                                                                     {"prefetch_factor", Kind::count_from_one},
                                                                     {"batch_size", Kind::count_from_one},
                                                                     {"pin_memory", Kind::boolean},
                                                                     {"persistent_workers", Kind::boolean}};
  return settings;
}

std::string accepted_settings() {
  std::vector<std::string> names;
  for (const auto& [name, kind] : dataloader_settings()) names.push_back(name);
  names.push_back("env:NAME");
  return fmt::format("{}", fmt::join(names, ", "));
}

void check_value(const std::string& setting, Kind kind, const std::string& value) {
  const std::string what = "--vary " + setting + "=" + value;
  if (kind == Kind::boolean) {
    if (value != "true" && value != "false") throw UsageError(what, "'" + value + "' is not true or false");
    return;
  }
  const int lowest = kind == Kind::count_from_zero ? 0 : 1;
  std::size_t used = 0;
  long number = -1;
  try {
    number = std::stol(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || number < lowest || number > 4096)
    throw UsageError(what, fmt::format("'{}' is not a whole number from {} to 4096", value, lowest));
}

std::vector<std::string> split_values(const std::string& text) {
  std::vector<std::string> values;
  std::stringstream in(text);
  for (std::string v; std::getline(in, v, ',');) values.push_back(v);
  if (!text.empty() && text.back() == ',') values.push_back("");
  return values;
}

}  // namespace

VarySetting parse_vary(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError("--vary " + text, "expected SETTING=V1,V2,.. with SETTING one of " + accepted_settings());
  VarySetting s;
  s.name = text.substr(0, eq);
  s.values = split_values(text.substr(eq + 1));
  std::optional<Kind> kind;
  for (const auto& [name, k] : dataloader_settings())
    if (name == s.name) kind = k;
  if (s.name.rfind("env:", 0) == 0) {
    s.env_name = s.name.substr(4);
    const bool valid = !s.env_name.empty() && !std::isdigit(static_cast<unsigned char>(s.env_name[0])) &&
                       std::all_of(s.env_name.begin(), s.env_name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (!valid) throw UsageError("--vary " + text, "'" + s.env_name + "' is not an environment variable name (letters, digits, _)");
    if (s.env_name.rfind("NODEAUDIT_LEARN", 0) == 0 || s.env_name == "PYTHONPATH")
      throw UsageError("--vary " + text, s.env_name + " is set by learn itself and cannot be varied");
  } else if (!kind) {
    throw UsageError("--vary " + text, "unknown setting '" + s.name + "'; accepted: " + accepted_settings());
  }
  if (s.values.size() < 2) throw UsageError("--vary " + text, "give at least two values to compare, e.g. " + s.name + "=1,2");
  std::set<std::string> seen;
  for (const auto& v : s.values) {
    if (v.empty()) throw UsageError("--vary " + text, "an empty value; give values separated by commas");
    if (!seen.insert(v).second) throw UsageError("--vary " + text, "'" + v + "' is given twice");
    if (kind) check_value(s.name, *kind, v);
  }
  return s;
}

std::map<std::string, std::string> vary_environment(const VarySetting& setting, const std::string& value) {
  if (!setting.env_name.empty()) return {{setting.env_name, value}};
  json typed = value == "true" ? json(true) : value == "false" ? json(false) : json(std::stol(value));
  return {{"NODEAUDIT_LEARN_OVERRIDES", json{{"dataloader", {{setting.name, typed}}}}.dump()}};
}

VaryReport summarize_vary(const VarySetting& setting, int repeats, const std::vector<VaryRun>& runs) {
  VaryReport report{setting, repeats, {}, std::nullopt};
  for (const auto& value : setting.values) {
    VaryValue v;
    v.value = value;
    for (const auto& r : runs) {
      if (r.value != value) continue;
      if (!r.ok) {
        v.failures.push_back(fmt::format("repeat {}: {}", r.repeat, r.failure));
        continue;
      }
      v.step_time_s.push_back(r.step_time_s);
      v.samples_per_s.push_back(r.samples_per_s);
      v.data_wait_share.push_back(r.data_wait_share);
      if (r.cpu_cores) v.cpu_cores.push_back(*r.cpu_cores);
    }
    const auto& figure = setting.per_sample_rate() ? v.samples_per_s : v.step_time_s;
    if (!figure.empty()) {
      v.figure_median = median_or_nan(figure);
      v.figure_min = *std::min_element(figure.begin(), figure.end());
      v.figure_max = *std::max_element(figure.begin(), figure.end());
    }
    report.values.push_back(v);
  }
  const VaryValue& base = report.values.front();
  const bool higher_is_better = setting.per_sample_rate();
  for (std::size_t i = 0; i < report.values.size(); ++i) {
    VaryValue& v = report.values[i];
    if (i == 0) {
      v.verdict = "baseline";
      continue;
    }
    const std::size_t runs_v = setting.per_sample_rate() ? v.samples_per_s.size() : v.step_time_s.size();
    const std::size_t runs_base = setting.per_sample_rate() ? base.samples_per_s.size() : base.step_time_s.size();
    if (runs_v == 0 || runs_base == 0 || !v.failures.empty() || !base.failures.empty()) {
      v.verdict = "not judged (a run failed)";
      continue;
    }
    v.gain = higher_is_better ? v.figure_median / base.figure_median - 1 : 1 - v.figure_median / base.figure_median;
    if (runs_v < 2 || runs_base < 2) {
      v.verdict = "not judged (one repeat: no spread)";
      continue;
    }
    const double spread = std::max(v.figure_max - v.figure_min, base.figure_max - base.figure_min);
    const double difference = v.figure_median - base.figure_median;
    if (std::fabs(difference) <= spread) v.verdict = "no difference beyond the spread";
    else v.verdict = (difference < 0) != higher_is_better ? "better" : "worse";
  }
  const bool all_measured = std::all_of(report.values.begin(), report.values.end(), [](const VaryValue& v) { return v.figure_median > 0; });
  if (all_measured) {
    const auto best = std::min_element(report.values.begin(), report.values.end(), [&](const VaryValue& a, const VaryValue& b) {
      return higher_is_better ? a.figure_median > b.figure_median : a.figure_median < b.figure_median;
    });
    report.best = best->value;
  }
  return report;
}

json vary_probe_entry(const VaryReport& report, const std::vector<VaryRun>& runs, const std::vector<std::string>& command, double wall_s) {
  std::vector<Metric> metrics;
  json values = json::array();
  bool failed = false;
  for (const auto& v : report.values) {
    const Labels labels{{"setting", report.setting.name}, {"value", v.value}};
    if (!v.step_time_s.empty()) {
      metrics.push_back({"step_time", unit::s, Better::lower, labels, v.step_time_s});
      metrics.push_back({"samples_per_s", unit::samples_per_s, Better::higher, labels, v.samples_per_s});
      std::vector<double> wait_pct;
      for (double w : v.data_wait_share) wait_pct.push_back(100 * w);
      metrics.push_back({"data_wait_share", unit::percent, Better::lower, labels, wait_pct});
    }
    if (!v.cpu_cores.empty()) {
      std::vector<double> cpu_pct;
      for (double c : v.cpu_cores) cpu_pct.push_back(100 * c);
      metrics.push_back({"process_cpu", unit::percent, Better::lower, labels, cpu_pct});
    }
    failed = failed || !v.failures.empty();
    values.push_back({{"value", v.value}, {"figure", report.setting.per_sample_rate() ? "samples_per_s" : "step_time_s"},
                      {"median", v.figure_median}, {"min", v.figure_min}, {"max", v.figure_max}, {"verdict", v.verdict},
                      {"gain", v.gain}, {"failures", v.failures}});
  }
  json run_list = json::array();
  for (const auto& r : runs)
    run_list.push_back({{"value", r.value}, {"repeat", r.repeat}, {"ok", r.ok}, {"failure", r.failure}, {"step_time_s", r.step_time_s},
                        {"samples_per_s", r.samples_per_s}, {"data_wait_share", r.data_wait_share}});
  const json params = {{"setting", report.setting.name}, {"values", report.setting.values}, {"repeats", report.repeats}};
  const json info = {{"command", command}, {"baseline", report.setting.values.front()}, {"values", values},
                     {"best", report.best ? json(*report.best) : json(nullptr)}, {"runs", run_list}};
  const Outcome outcome = failed ? Outcome::failed("a run failed for at least one value; the others are kept") : Outcome::ok();
  return probe_entry("learn.vary", outcome, params, wall_s, metrics, {}, info);
}

}  // namespace nodeaudit::learn
