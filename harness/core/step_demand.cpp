#include "harness/core/step_demand.hpp"

namespace nodeaudit {

nlohmann::json StepDemand::to_json() const {
  return {{"profile", profile}, {"decode", decode}, {"sample_bytes", sample_bytes}, {"workload", workload}};
}

StepDemand StepDemand::from_json(const nlohmann::json& j) {
  StepDemand d;
  d.profile = j.at("profile").get<std::string>();
  d.decode = j.at("decode").get<std::string>();
  d.sample_bytes = j.at("sample_bytes").get<double>();
  d.workload = j.at("workload");
  return d;
}

}  // namespace nodeaudit
