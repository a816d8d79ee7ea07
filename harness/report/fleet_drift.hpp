// Configuration drift across a fleet: the software versions (driver, CUDA, NCCL, ...), the host's
// kernel, OS, CPU and firmware strings, each GPU's settings (VBIOS, power limit, clocks, ECC, MIG,
// PCIe link) and the severity of each host.config / gpu.config finding. Every setting whose value
// differs between nodes is listed with which nodes hold which value, the most common value first.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/report/fleet_model.hpp"

namespace nodeaudit::report {

// The settings of one result that drift is checked on, in a stable order.
std::vector<ConfigEntry> config_of(const nlohmann::json& doc);

struct DriftValue {
  std::string value;               // "" when the node did not record the setting
  std::string example;             // a finding's message, for finding severities
  std::vector<std::size_t> nodes;  // indices into FleetInput::nodes
};

struct DriftSetting {
  std::string setting;
  std::vector<DriftValue> values;  // most common first (ties: first seen)
};

// Only the settings with more than one value across the nodes.
std::vector<DriftSetting> find_drift(const std::vector<FleetNode>& nodes);

}  // namespace nodeaudit::report
