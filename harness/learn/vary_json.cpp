// `learn --vary`'s result entry (`learn.vary`): per value its repeats as metrics, each repeat also a
// round median (so `compare` reads their scatter as the noise between runs, and the report reads them like any probe's), and in `info` everything the report shows, so a recorded
// result renders the same report again (vary_report_from_entry).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/result.hpp"
#include "harness/learn/vary.hpp"

namespace nodeaudit::learn {

using nlohmann::json;

namespace {

std::vector<double> scaled(const std::vector<double>& values, double factor) {
  std::vector<double> out;
  for (double v : values) out.push_back(factor * v);
  return out;
}

std::vector<Metric> value_metrics(const VaryReport& report, const VaryValue& v) {
  std::vector<Metric> metrics;
  const Labels labels{{"setting", report.setting.name}, {"value", v.value}};
  if (!v.step_time_s.empty()) {
    metrics.push_back({"step_time", unit::s, Better::lower, labels, v.step_time_s});
    metrics.push_back({"samples_per_s", unit::samples_per_s, Better::higher, labels, v.samples_per_s});
    metrics.push_back({"data_wait_share", unit::percent, Better::lower, labels, scaled(v.data_wait_share, 100)});
  }
  if (!v.cpu_cores.empty()) metrics.push_back({"process_cpu", unit::percent, Better::lower, labels, scaled(v.cpu_cores, 100)});
  if (!v.gpu_peak_bytes.empty()) metrics.push_back({"gpu_peak_allocated", unit::bytes, Better::lower, labels, v.gpu_peak_bytes});
  if (!v.gpu_util_pct.empty()) metrics.push_back({"gpu_utilization", unit::percent, Better::higher, labels, v.gpu_util_pct});
  return metrics;
}

json value_json(const VaryReport& report, const VaryValue& v) {
  json out = {{"value", v.value}, {"figure", report.setting.per_sample_rate() ? "samples_per_s" : "step_time_s"},
              {"median", v.figure_median}, {"min", v.figure_min}, {"max", v.figure_max}, {"verdict", v.verdict}, {"statistic", v.statistic},
              {"gain", v.gain}, {"failures", v.failures}, {"command", v.command},
              {"step_time_s", v.step_time_s}, {"samples_per_s", v.samples_per_s}, {"data_wait_share", v.data_wait_share},
              {"cpu_cores", v.cpu_cores}, {"gpu_peak_allocated_bytes", v.gpu_peak_bytes},
              {"gpu_utilization_pct", v.gpu_util_pct}, {"target_samples", v.target_samples},
              {"target_samples_how", v.target_samples_how}};
  if (const auto hours = run_hours(v)) out["run_hours"] = *hours;
  if (const auto cost = run_cost(report, v)) out["run_cost"] = *cost;
  return out;
}

std::vector<double> numbers(const json& j, const char* key) {
  std::vector<double> out;
  for (const auto& x : j.value(key, json::array()))
    if (x.is_number()) out.push_back(x.get<double>());
  return out;
}

}  // namespace

json vary_probe_entry(const VaryReport& report, const std::vector<VaryRun>& runs, const std::vector<std::string>& command, double wall_s) {
  std::vector<Metric> metrics;
  json values = json::array();
  bool failed = false;
  for (const auto& v : report.values) {
    for (auto& m : value_metrics(report, v)) metrics.push_back(std::move(m));
    failed = failed || !v.failures.empty();
    values.push_back(value_json(report, v));
  }
  json run_list = json::array();
  for (const auto& r : runs)
    run_list.push_back({{"value", r.value}, {"repeat", r.repeat}, {"ok", r.ok}, {"failure", r.failure}, {"step_time_s", r.step_time_s},
                        {"samples_per_s", r.samples_per_s}, {"samples_per_step", r.samples_per_step}, {"data_wait_share", r.data_wait_share}});
  const json params = {{"setting", report.setting.name}, {"values", report.setting.values}, {"repeats", report.repeats}};
  json info = {{"command", command}, {"baseline", report.baseline}, {"own_value", report.own_value ? json(*report.own_value) : json(nullptr)},
               {"probe_s", report.probe_s}, {"values", values}, {"best", report.best ? json(*report.best) : json(nullptr)},
               {"best_profile", report.best_profile_path}, {"advice", report.advice}, {"runs", run_list}};
  if (report.price_per_hour) info["price_per_hour"] = *report.price_per_hour;
  const Outcome outcome = failed ? Outcome::failed("a run failed for at least one value; the others are kept") : Outcome::ok();
  json entry =
      probe_entry({.id = "learn.vary", .outcome = outcome, .params = params, .duration_s = wall_s, .metrics = metrics, .info = info});
  // Each repeat is a run of its own (a fresh job): its figure is that run's figure, so the repeats are
  // the runs whose scatter compare measures noise from, as rounds are for `run`.
  for (auto& metric : entry["metrics"])
    if (metric["samples"].size() >= 2) metric["round_medians"] = metric["samples"];
  return entry;
}

VaryReport vary_report_from_entry(const json& entry) {
  const json& params = entry.at("params");
  const json& info = entry.at("info");
  VaryReport r;
  const auto values = params.at("values").get<std::vector<std::string>>();
  r.setting = params.at("setting") == "data_dir" && values.size() == 2 ? data_dir_setting(values[0], values[1]) : parse_vary(params.at("setting").get<std::string>() + "=" + fmt::format("{}", fmt::join(params.at("values").get<std::vector<std::string>>(), ",")));
  r.repeats = params.at("repeats").get<int>();
  r.baseline = info.at("baseline").get<std::string>();
  if (info.value("own_value", json()).is_string()) r.own_value = info["own_value"].get<std::string>();
  r.probe_s = info.value("probe_s", 0.0);
  if (info.value("best", json()).is_string()) r.best = info["best"].get<std::string>();
  r.best_profile_path = info.value("best_profile", "");
  r.advice = info.value("advice", "");
  if (info.contains("price_per_hour")) r.price_per_hour = info["price_per_hour"].get<double>();
  for (const auto& j : info.at("values")) {
    VaryValue v;
    v.value = j.at("value").get<std::string>();
    v.figure_median = j.value("median", 0.0);
    v.figure_min = j.value("min", 0.0);
    v.figure_max = j.value("max", 0.0);
    v.verdict = j.value("verdict", "");
    v.statistic = j.value("statistic", "");
    v.gain = j.value("gain", 0.0);
    v.failures = j.value("failures", std::vector<std::string>{});
    v.command = j.value("command", "");
    v.step_time_s = numbers(j, "step_time_s");
    v.samples_per_s = numbers(j, "samples_per_s");
    v.data_wait_share = numbers(j, "data_wait_share");
    v.cpu_cores = numbers(j, "cpu_cores");
    v.gpu_peak_bytes = numbers(j, "gpu_peak_allocated_bytes");
    v.gpu_util_pct = numbers(j, "gpu_utilization_pct");
    v.target_samples = j.value("target_samples", 0.0);
    v.target_samples_how = j.value("target_samples_how", "");
    r.values.push_back(std::move(v));
  }
  return r;
}

}  // namespace nodeaudit::learn
