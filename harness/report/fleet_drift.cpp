#include "harness/report/fleet_drift.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "harness/core/probe_catalogue.hpp"

namespace nodeaudit::report {

namespace {

using json = nlohmann::json;

std::string setting_text(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// The host's identity strings; firmware ones only where the result records them.
constexpr const char* host_settings[] = {"kernel",       "os",        "cpu_model",  "bios_vendor",
                                         "bios_version", "bios_date", "board_name", "product_name"};
// Per-GPU settings. PCIe generation is the link's maximum: an idle link trains down and back up.
constexpr const char* gpu_settings[] = {
    "name",        "vbios_version",    "power_limit_w", "sm_clock_max_mhz",  "ecc_enabled",
    "mig_enabled", "persistence_mode", "pcie_gen_max",  "pcie_width_current"};

// "700" when every GPU agrees, else "700 (GPUs 0, 1, 2); 650 (GPU 3)".
std::string per_gpu_value(const json& gpus, const std::string& key) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  bool any = false;
  for (const auto& gpu : gpus) {
    const auto it = gpu.find(key);
    const std::string value = it == gpu.end() ? "not recorded" : setting_text(*it);
    any = any || it != gpu.end();
    const std::string index = setting_text(gpu.value("index", json(groups.size())));
    auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == value; });
    if (group == groups.end())
      groups.push_back({value, {index}});
    else
      group->second.push_back(index);
  }
  if (!any) return "";
  if (groups.size() == 1) return groups.front().first;
  std::string text;
  for (const auto& [value, indices] : groups)
    text += fmt::format("{}{} (GPU{} {})", text.empty() ? "" : "; ", value, indices.size() > 1 ? "s" : "",
                        fmt::join(indices, ", "));
  return text;
}

// A check probe's findings by code: the severities seen ("warn", or "info, warn" when a code is
// reported per GPU with different outcomes) and the message of the worst.
void add_findings(std::vector<ConfigEntry>& config, const json& probe) {
  static const std::map<std::string, int> rank = {{"info", 0}, {"warn", 1}, {"fail", 2}};
  std::map<std::string, std::pair<std::vector<std::string>, std::pair<int, std::string>>> by_code;
  std::vector<std::string> order;
  for (const auto& finding : probe.value("findings", json::array())) {
    const std::string code = finding.value("code", "?"), severity = finding.value("severity", "?");
    auto [it, added] = by_code.try_emplace(code);
    if (added) order.push_back(code), it->second.second = {-1, ""};
    auto& severities = it->second.first;
    if (std::find(severities.begin(), severities.end(), severity) == severities.end()) severities.push_back(severity);
    const auto r = rank.find(severity);
    const int here = r == rank.end() ? 1 : r->second;
    if (here > it->second.second.first) it->second.second = {here, finding.value("message", "")};
  }
  for (const auto& code : order) {
    auto& [severities, worst] = by_code[code];
    std::sort(severities.begin(), severities.end());
    config.push_back(
        {probe.value("id", "?") + " " + code, fmt::format("{}", fmt::join(severities, ", ")), worst.second});
  }
}

}  // namespace

std::vector<ConfigEntry> config_of(const json& doc) {
  std::vector<ConfigEntry> config;
  const json& env = doc.at("env");
  const json software = env.value("software", json::object());
  for (const auto& [key, value] : software.items()) config.push_back({"software." + key, setting_text(value), ""});
  const json host = env.value("host", json::object());
  for (const char* key : host_settings)
    if (host.contains(key)) config.push_back({std::string("host.") + key, setting_text(host[key]), ""});
  const json gpus = env.value("gpus", json::array());
  config.push_back({"gpus", std::to_string(gpus.size()), ""});
  for (const char* key : gpu_settings)
    if (std::string value = per_gpu_value(gpus, key); !value.empty())
      config.push_back({std::string("gpu.") + key, std::move(value), ""});
  for (const auto& probe : doc.at("probes")) {
    const std::string id = probe.value("id", "");
    if (is_configuration_audit(id) && probe.value("status", "") == "ok") add_findings(config, probe);
  }
  return config;
}

std::vector<DriftSetting> find_drift(const std::vector<FleetNode>& nodes) {
  std::vector<DriftSetting> settings;
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t n = 0; n < nodes.size(); ++n)
    for (const auto& entry : nodes[n].config) {
      const auto [it, added] = index.emplace(entry.setting, settings.size());
      if (added) settings.push_back({entry.setting, {}});
      auto& values = settings[it->second].values;
      auto value =
          std::find_if(values.begin(), values.end(), [&](const DriftValue& v) { return v.value == entry.value; });
      if (value == values.end())
        values.push_back({entry.value, entry.example, {n}});
      else
        value->nodes.push_back(n);
    }
  // A node that does not record a setting at all holds "" (not recorded).
  for (auto& setting : settings) {
    std::size_t holders = 0;
    for (const auto& value : setting.values) holders += value.nodes.size();
    if (holders == nodes.size()) continue;
    std::vector<bool> holds(nodes.size(), false);
    for (const auto& value : setting.values)
      for (const std::size_t n : value.nodes) holds[n] = true;
    DriftValue missing{"", "", {}};
    for (std::size_t n = 0; n < nodes.size(); ++n)
      if (!holds[n]) missing.nodes.push_back(n);
    setting.values.push_back(std::move(missing));
  }
  std::erase_if(settings, [](const DriftSetting& s) { return s.values.size() < 2; });
  for (auto& setting : settings)
    std::stable_sort(setting.values.begin(), setting.values.end(),
                     [](const DriftValue& a, const DriftValue& b) { return a.nodes.size() > b.nodes.size(); });
  return settings;
}

}  // namespace nodeaudit::report
