#include "pipeline/samples/workload_profile.hpp"

#include <stdexcept>

#include "harness/score/step_demand.hpp"

namespace nodeaudit::pipeline {

score::Profile workload_profile(const ProbeContext& ctx) {
  if (!ctx.settings().step_demand)
    throw std::runtime_error("no workload was given to this probe (the session hands every probe with a --workload "
                             "parameter the run's step demand)");
  return score::profile_of_demand(*ctx.settings().step_demand);
}

}  // namespace nodeaudit::pipeline
