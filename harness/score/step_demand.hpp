// A profile as the step demand the probes receive (core/step_demand.hpp), and back: the scorer
// writes the profile's model, data and training blocks once, and a probe that emulates the step
// rebuilds the same Profile from them, so its prediction uses the scorer's own numbers.
#pragma once

#include "harness/core/step_demand.hpp"
#include "harness/score/profile.hpp"

namespace nodeaudit::score {

StepDemand step_demand_of(const Profile& profile);
// The profile the demand was made from: name, category, model, data and training as they were;
// thresholds and [expect] at their defaults (they judge a step, they do not shape it).
Profile profile_of_demand(const StepDemand& demand);

}  // namespace nodeaudit::score
