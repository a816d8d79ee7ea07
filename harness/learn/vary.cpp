#include "harness/learn/vary.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include <fmt/ranges.h>

#include "harness/core/change_test.hpp"
#include "harness/core/stats.hpp"

#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"

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
  names.push_back("cpus");
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
  if (s.cpus()) kind = Kind::count_from_one;  // the machine's own bound is checked by CpuConfinement
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
  std::set<std::string> seen;
  for (const auto& v : s.values) {
    if (v.empty()) throw UsageError("--vary " + text, "an empty value; give values separated by commas");
    if (!seen.insert(v).second) throw UsageError("--vary " + text, "'" + v + "' is given twice");
    if (kind) check_value(s.name, *kind, v);
  }
  // Each value is checked first: `num_workers=abc` is a value that is not a number, not too few values.
  if (s.values.size() < 2) throw UsageError("--vary " + text, "give at least two values to compare, e.g. " + s.name + "=1,2");
  return s;
}

VarySetting data_dir_setting(const std::string& original, const std::string& copy) {
  return {"data_dir", "", {original, copy}};
}

std::map<std::string, std::string> vary_environment(const VarySetting& setting, const std::string& value) {
  if (setting.data_dir()) return {};  // the command names the place (learn_data_copy.cpp)
  if (setting.cpus()) return {};      // the command is confined (cpu_confinement.hpp)
  if (!setting.env_name.empty()) return {{setting.env_name, value}};
  json typed = value == "true" ? json(true) : value == "false" ? json(false) : json(std::stol(value));
  return {{"NODEAUDIT_LEARN_OVERRIDES", json{{"dataloader", {{setting.name, typed}}}}.dump()}};
}

Spread spread_of(const std::vector<double>& values) {
  if (values.empty()) return {};
  return {median_or_nan(values), *std::min_element(values.begin(), values.end()), *std::max_element(values.begin(), values.end()),
          values.size()};
}

const VaryValue* find_value(const VaryReport& report, const std::string& value) {
  for (const auto& v : report.values)
    if (v.value == value) return &v;
  return nullptr;
}

namespace {

VaryValue gather(const VarySetting& setting, const std::string& value, const std::vector<VaryRun>& runs) {
  VaryValue v;
  v.value = value;
  for (const auto& r : runs) {
    if (r.value != value) continue;
    if (v.command.empty()) v.command = r.command;
    if (!r.ok) {
      v.failures.push_back(fmt::format("repeat {}: {}", r.repeat, r.failure));
      continue;
    }
    v.step_time_s.push_back(r.step_time_s);
    v.samples_per_s.push_back(r.samples_per_s);
    v.data_wait_share.push_back(r.data_wait_share);
    if (r.cpu_cores) v.cpu_cores.push_back(*r.cpu_cores);
    if (r.gpu_peak_bytes) v.gpu_peak_bytes.push_back(*r.gpu_peak_bytes);
    if (r.gpu_util_pct) v.gpu_util_pct.push_back(*r.gpu_util_pct);
    if (r.target_samples > 0) v.target_samples = r.target_samples, v.target_samples_how = r.target_samples_how;
  }
  const Spread figure = spread_of(setting.per_sample_rate() ? v.samples_per_s : v.step_time_s);
  v.figure_median = figure.median;
  v.figure_min = figure.min;
  v.figure_max = figure.max;
  return v;
}

// The rule of harness/core/change_test.hpp on the value's repeats against the baseline's: better or
// worse only when the 99% t-interval of the difference of the means leaves zero.
void judge(const VarySetting& setting, const VaryValue& base, VaryValue& v) {
  const bool higher_is_better = setting.per_sample_rate();
  const auto& figure = [&](const VaryValue& x) -> const std::vector<double>& { return higher_is_better ? x.samples_per_s : x.step_time_s; };
  if (figure(v).empty() || figure(base).empty() || !v.failures.empty() || !base.failures.empty()) {
    v.verdict = "not judged (a run failed)";
    return;
  }
  const ChangeTest test = test_change(figure(base), figure(v));
  v.gain = higher_is_better ? test.change : -test.change;
  v.statistic = test.statistic();
  if (!test.measured()) {
    v.verdict = "not judged (one run a value: no scatter between runs)";
    return;
  }
  if (!test.significant()) v.verdict = "no difference";
  else v.verdict = v.gain > 0 ? "better" : "worse";
}

}  // namespace

VaryReport summarize_vary(const VarySetting& setting, int repeats, const std::vector<VaryRun>& runs, const std::string& baseline) {
  VaryReport report;
  report.setting = setting;
  report.repeats = repeats;
  report.baseline = baseline;
  for (const auto& value : setting.values) report.values.push_back(gather(setting, value, runs));
  const VaryValue base = *find_value(report, baseline);
  for (auto& v : report.values) {
    if (v.value == baseline) v.verdict = "baseline";
    else judge(setting, base, v);
  }
  const bool higher_is_better = setting.per_sample_rate();
  const bool all_measured = std::all_of(report.values.begin(), report.values.end(), [](const VaryValue& v) { return v.figure_median > 0; });
  if (all_measured) {
    const auto best = std::min_element(report.values.begin(), report.values.end(), [&](const VaryValue& a, const VaryValue& b) {
      const double mean_a = summarize(higher_is_better ? a.samples_per_s : a.step_time_s).mean;
      const double mean_b = summarize(higher_is_better ? b.samples_per_s : b.step_time_s).mean;
      return higher_is_better ? mean_a > mean_b : mean_a < mean_b;
    });
    report.best = best->value;
  }
  return report;
}

std::optional<double> run_hours(const VaryValue& v) {
  const double rate = spread_of(v.samples_per_s).median;
  if (!(rate > 0) || !(v.target_samples > 0)) return std::nullopt;
  return v.target_samples / rate / 3600;
}

std::optional<double> run_cost(const VaryReport& report, const VaryValue& v) {
  const auto hours = run_hours(v);
  if (!hours || !report.price_per_hour) return std::nullopt;
  return *hours * *report.price_per_hour;
}

}  // namespace nodeaudit::learn
