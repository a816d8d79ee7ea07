#include "harness/score/result_view.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace nodeaudit::score {

using nlohmann::json;

ProbeState probe_state(const json& result, const std::string& id) {
  ProbeState state;
  if (!result.is_object() || !result.contains("probes") || !result["probes"].is_array()) {
    state.why = id + " not run";
    return state;
  }
  for (const json& probe : result["probes"]) {
    if (!probe.is_object() || probe.value("id", "") != id) continue;
    const std::string status = probe.value("status", "unknown");
    if (status == "ok") {
      state.probe = &probe;
      return state;
    }
    const std::string reason =
        probe.contains("reason") && probe["reason"].is_string() ? probe["reason"].get<std::string>() : "";
    // A skip reason is said once, in the assessment's list of skipped probes, not on every line
    // that rests on the probe (one missing driver stops a dozen probes and half the rules).
    const bool said_once = status == "skipped";
    state.why = reason.empty() || said_once ? fmt::format("{} {}", id, status) : fmt::format("{} {}: {}", id, status, reason);
    return state;
  }
  state.why = id + " not run";
  return state;
}

std::string label_of(const json& metric, const std::string& key) {
  if (!metric.contains("labels") || !metric["labels"].is_object()) return "";
  const json& labels = metric["labels"];
  return labels.contains(key) && labels[key].is_string() ? labels[key].get<std::string>() : "";
}

std::vector<const json*> select_metrics(const json& probe, const std::string& name, const LabelFilter& filter) {
  std::vector<const json*> found;
  if (!probe.contains("metrics") || !probe["metrics"].is_array()) return found;
  for (const json& metric : probe["metrics"]) {
    if (!metric.is_object() || metric.value("name", "") != name || !metric.contains("median") ||
        !metric["median"].is_number())
      continue;
    const bool matches = std::all_of(filter.begin(), filter.end(),
                                     [&](const auto& pair) { return label_of(metric, pair.first) == pair.second; });
    if (matches) found.push_back(&metric);
  }
  return found;
}

bool is_datasheet(const json& probe) { return probe.is_object() && probe.contains("datasheet"); }

std::string datasheet_source(const json& probe, const json& metric) {
  const std::string source = metric.is_object() && metric.contains("source") && metric["source"].is_string()
                                 ? metric["source"].get<std::string>()
                                 : "datasheet peak (" + probe["datasheet"].value("source", std::string("the GPU table")) + ")";
  return source;
}

double metric_median(const json& metric) {
  return metric["median"].get<double>();
}

std::string describe_filter(const LabelFilter& filter) {
  std::string out;
  for (const auto& [key, value] : filter)
    if (!value.empty()) out += fmt::format("{}{}={}", out.empty() ? "" : ", ", key, value);  // "" = the label absent
  return out.empty() ? "" : " [" + out + "]";
}

std::vector<std::pair<std::string, double>> per_gpu_medians(const json& probe, const std::string& name,
                                                            const LabelFilter& filter) {
  std::vector<std::pair<std::string, double>> medians;
  for (const json* metric : select_metrics(probe, name, filter))
    medians.emplace_back(label_of(*metric, "gpu"), metric_median(*metric));
  std::sort(medians.begin(), medians.end(), [](const auto& a, const auto& b) {
    return a.first.size() != b.first.size() ? a.first.size() < b.first.size() : a.first < b.first;
  });
  return medians;
}

std::optional<Figure> slowest_gpu(const json& probe, const std::string& id, const std::string& name,
                                  const LabelFilter& filter) {
  const auto metrics = select_metrics(probe, name, filter);
  if (metrics.empty()) return std::nullopt;
  const json* slowest = *std::min_element(metrics.begin(), metrics.end(), [](const json* a, const json* b) {
    return metric_median(*a) < metric_median(*b);
  });
  Figure figure{metric_median(*slowest), "", (*slowest)["labels"]};
  figure.source = fmt::format("{} {}{} median, min of {} GPU{}", id, name, describe_filter(filter), metrics.size(),
                              metrics.size() == 1 ? "" : "s");
  if (is_datasheet(probe)) {
    figure.source = datasheet_source(probe, *slowest);
    figure.datasheet = true;
  }
  return figure;
}

std::optional<Figure> best_series(const json& probe, const std::string& id, const std::string& name,
                                  const LabelFilter& filter) {
  const auto metrics = select_metrics(probe, name, filter);
  if (metrics.empty()) return std::nullopt;
  const json* best = *std::max_element(metrics.begin(), metrics.end(), [](const json* a, const json* b) {
    return metric_median(*a) < metric_median(*b);
  });
  Figure figure{metric_median(*best), "", best->contains("labels") ? (*best)["labels"] : json::object()};
  LabelFilter shown;
  for (const auto& [key, value] : figure.labels.items())
    if (value.is_string()) shown[key] = value.get<std::string>();
  figure.source = fmt::format("{} {}{} median, best of {} series", id, name, describe_filter(shown), metrics.size());
  if (is_datasheet(probe)) {
    figure.source = datasheet_source(probe, *best);
    figure.datasheet = true;
  }
  return figure;
}

std::optional<double> number_at(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return std::nullopt;
  return object[key].get<double>();
}

EnvFigures env_figures(const json& result) {
  EnvFigures figures;
  if (!result.contains("env") || !result["env"].is_object()) return figures;
  const json& env = result["env"];
  if (env.contains("gpus") && env["gpus"].is_array()) {
    figures.gpus = static_cast<int>(env["gpus"].size());
    for (const json& gpu : env["gpus"]) {
      figures.gpu_memory_total_bytes += number_at(gpu, "memory_total_bytes").value_or(0);
      if (gpu.is_object() && gpu.value("datasheet", false)) figures.gpus_from_target = true;
    }
  }
  if (env.contains("gpu_status") && env["gpu_status"].is_string())
    figures.gpu_status = env["gpu_status"].get<std::string>();
  if (env.contains("host") && env["host"].is_object()) {
    const json& host = env["host"];
    figures.ram_total_bytes = number_at(host, "ram_total_bytes");
    figures.ram_available_bytes = number_at(host, "ram_available_bytes");
    figures.cores = number_at(host, "cores");
  }
  // A container's or cgroup's limits are what a training job here gets, not the host's totals.
  if (env.contains("container") && env["container"].is_object()) {
    const json& container = env["container"];
    const auto cores = number_at(container, "usable_cores");
    const auto ram = number_at(container, "usable_ram_bytes");
    if (cores && figures.cores && *cores < *figures.cores) figures.cores = cores, figures.limited = true;
    if (ram && figures.ram_total_bytes && *ram < *figures.ram_total_bytes)
      figures.ram_total_bytes = ram, figures.limited = true;
  }
  return figures;
}

}  // namespace nodeaudit::score
