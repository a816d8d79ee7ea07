// A profile as the step demand the probes receive (core/step_demand.hpp), and back: the scorer
// writes the profile's fields once, through the field table (profile_fields.hpp), and a probe that
// emulates the step rebuilds the same Profile from them, so its prediction uses the scorer's own numbers.
#pragma once

#include "harness/core/step_demand.hpp"
#include "harness/score/profile.hpp"

namespace nodeaudit::score {

StepDemand step_demand_of(const Profile& profile);
// The profile the demand was made from: every field of the table as it was; [expect] at its
// defaults (it grades figures, it does not shape a step).
Profile profile_of_demand(const StepDemand& demand);

}  // namespace nodeaudit::score
