#include "harness/session/profile_probes.hpp"

#include <cstdio>

#include "harness/core/registry.hpp"
#include "harness/core/result.hpp"
#include "harness/node/nvml.hpp"
#include "harness/session/session.hpp"

namespace nodeaudit::session {

std::optional<nlohmann::json> entry_left_out_by_profile(const ProbeSpec& spec, const RunExtras& extras,
                                                        bool only_given) {
  const auto left_out = left_out_by_profile(spec, extras, only_given);
  if (!left_out) return std::nullopt;
  return probe_entry({.id = spec.id, .outcome = Outcome::skipped(*left_out)});
}

nlohmann::json run_profile_probes(const ProfileProbesRequest& request, const std::atomic<bool>& interrupt) {
  RunExtras extras;
  prepare_run_extras(request.profile_path, extras);
  extras.python = request.python;
  CommonOptions common;
  common.data_dir = request.data_dir;
  const Nvml nvml;
  const RunSettings settings = make_settings(common, nvml.device_count(), nvml.why_unavailable());
  if (!request.data_dir.empty()) remove_abandoned_scratch(request.data_dir);
  Session session(settings, std::nullopt, interrupt, &nvml);
  session.set_step_demand(run_step_demand(extras));
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& id : request.probe_ids(*extras.profile)) {
    const ProbeSpec* spec = probe_registry().find(id);
    if (spec == nullptr || interrupt.load()) continue;
    if (auto skipped = entry_left_out_by_profile(*spec, extras, false)) {
      probes.push_back(std::move(*skipped));
      continue;
    }
    std::fprintf(stderr, "%s: %s ...\n", request.announce.c_str(), id.c_str());
    EntryRequest entry_request;
    entry_request.param_texts = probe_params_for(*spec, extras);
    probes.push_back(session.run_entry(*spec, Placement::child, entry_request));
  }
  return probes;
}

}  // namespace nodeaudit::session
