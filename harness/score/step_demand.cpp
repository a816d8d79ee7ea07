// The profile to the probes and back through the field table: the workload block is the profile's
// fields as profile_fields_json writes them, and a probe reads them back with the same table.
#include "harness/score/step_demand.hpp"

#include "harness/score/profile_fields.hpp"

namespace nodeaudit::score {

StepDemand step_demand_of(const Profile& profile) {
  StepDemand demand;
  demand.profile = profile.name;
  demand.decode = to_string(profile.data.decode);
  demand.sample_bytes = profile.data.sample_bytes;
  demand.workload = profile_fields_json(profile);
  demand.workload["source_path"] = profile.source_path;
  return demand;
}

Profile profile_of_demand(const StepDemand& demand) {
  Profile profile = profile_from_fields_json(demand.workload);
  profile.source_path = demand.workload.value("source_path", "");
  return profile;
}

}  // namespace nodeaudit::score
