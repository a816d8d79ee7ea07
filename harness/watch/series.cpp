#include "harness/watch/series.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "harness/core/errors.hpp"

namespace nodeaudit::watch {

namespace {
constexpr double missing = std::numeric_limits<double>::quiet_NaN();
}

void WatchSeries::append(const TelemetryRow& row) {
  const std::size_t before = t_s.size();
  t_s.push_back(row.t_s);
  for (const auto& [name, value] : row.values) {
    auto& col = columns[name];
    if (col.size() < before) col.resize(before, missing);
    col.push_back(value);
  }
  for (auto& [name, col] : columns)
    if (col.size() < t_s.size()) col.resize(t_s.size(), missing);
}

const std::vector<double>& WatchSeries::column(const std::string& name) const {
  static const std::vector<double> none;
  auto it = columns.find(name);
  return it == columns.end() ? none : it->second;
}

std::vector<std::string> WatchSeries::names_like(const std::string& prefix, const std::string& suffix) const {
  std::vector<std::string> out;
  for (const auto& [name, col] : columns) {
    if (name.size() < prefix.size() + suffix.size()) continue;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    out.push_back(name);
  }
  return out;
}

std::vector<TelemetryRow> WatchSeries::rows() const {
  std::vector<TelemetryRow> out(t_s.size());
  for (std::size_t i = 0; i < t_s.size(); ++i) out[i].t_s = t_s[i];
  for (const auto& [name, col] : columns)
    for (std::size_t i = 0; i < col.size() && i < out.size(); ++i)
      if (std::isfinite(col[i])) out[i].values[name] = col[i];
  return out;
}

double value_at(const std::vector<double>& column, std::size_t i) { return i < column.size() ? column[i] : NAN; }

std::string gpu_column_prefix(const GpuFacts& gpu) { return fmt::format("gpu{}.", gpu.index); }

std::vector<double> finite(const std::vector<double>& values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (double v : values)
    if (std::isfinite(v)) out.push_back(v);
  return out;
}

std::optional<double> mean_of(const std::vector<double>& values) {
  double sum = 0;
  std::size_t n = 0;
  for (double v : values)
    if (std::isfinite(v)) sum += v, ++n;
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

std::optional<double> pcie_link_bytes_per_s(std::optional<unsigned> generation, std::optional<unsigned> width) {
  // GT/s per lane x encoding efficiency / 8 bits: gen1-2 use 8b/10b, gen3-5 128b/130b.
  static constexpr double per_lane_bytes_per_s[] = {0, 0.25e9, 0.5e9, 0.985e9, 1.969e9, 3.938e9, 7.877e9};
  if (!generation || !width || *generation < 1 || *generation > 6 || *width == 0) return std::nullopt;
  return per_lane_bytes_per_s[*generation] * *width;
}

nlohmann::json series_to_json(const WatchSeries& s) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : s.gpus) {
    nlohmann::json j = {{"index", g.index}, {"name", g.name}};
    if (g.memory_total_bytes) j["memory_total_bytes"] = *g.memory_total_bytes;
    if (g.power_limit_w) j["power_limit_w"] = *g.power_limit_w;
    if (g.pcie_link_bytes_per_s) j["pcie_link_bytes_per_s"] = *g.pcie_link_bytes_per_s;
    gpus.push_back(j);
  }
  nlohmann::json columns = nlohmann::json::object();
  for (const auto& [name, col] : s.columns) {
    nlohmann::json values = nlohmann::json::array();
    for (double v : col) values.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr));
    columns[name] = values;
  }
  nlohmann::json out = {{"interval_s", s.interval_s}, {"host_cpus", s.host_cpus}, {"gpus", gpus},
                        {"nic_speed_bytes_per_s", s.nic_speed_bytes_per_s}, {"t_s", s.t_s}, {"columns", columns}};
  if (!s.gpu_note.empty()) out["gpu_note"] = s.gpu_note;
  if (s.pid) out["pid"] = *s.pid;
  return out;
}

namespace {
std::optional<double> optional_number(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}
}  // namespace

WatchSeries series_from_json(const nlohmann::json& doc, const std::string& where) {
  if (!doc.is_object() || !doc.contains("t_s") || !doc["t_s"].is_array() || !doc.contains("columns") ||
      !doc["columns"].is_object())
    throw UsageError(where, "is not a watch series (needs \"t_s\" and \"columns\")");
  WatchSeries s;
  s.interval_s = doc.value("interval_s", 1.0);
  s.host_cpus = doc.value("host_cpus", 0);
  s.gpu_note = doc.value("gpu_note", "");
  if (doc.contains("pid") && doc["pid"].is_number_integer()) s.pid = doc["pid"].get<int>();
  s.t_s = doc["t_s"].get<std::vector<double>>();
  for (const auto& [name, values] : doc["columns"].items()) {
    if (!values.is_array() || values.size() != s.t_s.size())
      throw UsageError(where, "column " + name + " does not have one value per t_s entry");
    auto& col = s.columns[name];
    for (const auto& v : values) col.push_back(v.is_number() ? v.get<double>() : missing);
  }
  for (const auto& g : doc.value("gpus", nlohmann::json::array())) {
    GpuFacts f;
    f.index = g.value("index", 0);
    f.name = g.value("name", "");
    f.memory_total_bytes = optional_number(g, "memory_total_bytes");
    f.power_limit_w = optional_number(g, "power_limit_w");
    f.pcie_link_bytes_per_s = optional_number(g, "pcie_link_bytes_per_s");
    s.gpus.push_back(f);
  }
  if (doc.contains("nic_speed_bytes_per_s") && doc["nic_speed_bytes_per_s"].is_object())
    for (const auto& [name, v] : doc["nic_speed_bytes_per_s"].items())
      if (v.is_number()) s.nic_speed_bytes_per_s[name] = v.get<double>();
  return s;
}

}  // namespace nodeaudit::watch
