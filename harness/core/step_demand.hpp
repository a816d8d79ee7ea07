// The workload's demand per training step as a probe receives it: the profile parsed once by the
// session (from `run --profile`, `probe ID --workload`, or the default below) and handed, beside the
// probe's parameters and never inside them, to every probe that emulates a step: in this process
// through RunSettings, in a child of `run` inside the settings it is given. No probe reads a
// profile file itself, so the scorer and the probes see the same numbers.
//
// The harness reads the plain fields; `workload` holds the profile's fields as the scorer's field
// table writes them (score/profile_fields.hpp, through score/step_demand.hpp: step_demand_of), which
// a probe turns back into a score::Profile (profile_of_demand) without reading the file again.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace nodeaudit {

struct StepDemand {
  std::string profile;          // the profile's name
  std::string decode = "none";  // data.decode: none or jpeg
  double sample_bytes = 0;      // mean stored bytes of one sample
  nlohmann::json workload = nlohmann::json::object();

  nlohmann::json to_json() const;
  static StepDemand from_json(const nlohmann::json& j);
};

// The profile a probe that emulates a step uses when no --profile (and no --workload) names one:
// written once, here, for every such probe.
inline constexpr const char* default_step_profile = "cv-resnet50-imagenet";

}  // namespace nodeaudit
