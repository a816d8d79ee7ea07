// The workload of a step (pipeline.step and host.dataloader both take a `workload` parameter): the
// step demand the session parsed once from --workload, else the run's --profile, else its default
// profile (harness/core/step_demand.hpp). No profile file is read here.
#pragma once

#include "harness/core/context.hpp"
#include "harness/score/profile.hpp"

namespace nodeaudit::pipeline {

// Throws when the context carries no demand.
score::Profile workload_profile(const ProbeContext& ctx);

}  // namespace nodeaudit::pipeline
