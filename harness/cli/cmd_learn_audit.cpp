// `learn --audit`: once the job is learned, this node's probes that the scorer's step for the learned
// profile rests on, run by the run engine exactly as `run --profile` runs them (each in its own
// process, with its deadline and telemetry), into the learn result beside the job's own figures.
#include <cstdio>

#include "harness/cli/learn_run.hpp"
#include "harness/core/registry.hpp"
#include "harness/core/result.hpp"
#include "harness/node/nvml.hpp"
#include "harness/score/resource_probes.hpp"
#include "harness/session/session.hpp"
#include "harness/session/workload.hpp"

namespace nodeaudit::cli {

namespace {

// The GEMM rate and host-to-device copies (skipped with the reason on a node without a GPU), the
// storage probe of the profile's access pattern (as the scorer's storage stage reads it), CPU
// decode, which `run`'s own planning leaves out for a profile that decodes nothing, and, for a job
// whose loader is PyTorch's, the DataLoader in the job's own Python: the per-core loader rates that
// carry the job's CPU time to another node.
std::vector<std::string> audit_probe_ids(const score::Profile& profile, bool job_python) {
  namespace R = score::resource_figure;
  const bool sequential = profile.data.access == score::AccessPattern::sequential_shards;
  std::vector<std::string> ids{R::compute.probe, R::host_to_device.probe, score::storage_figure_for(sequential).probe, R::native_decode.probe};
  if (job_python && profile.data.loader == score::LoaderKind::pytorch) ids.push_back(R::framework_loader.probe);
  return ids;
}

}  // namespace

nlohmann::json audit_node_for_profile(const std::string& profile_path, const std::string& data_dir, const std::string& job_python,
                                      const std::atomic<bool>& interrupt) {
  session::RunExtras extras;
  session::prepare_run_extras(profile_path, extras);
  extras.python = job_python;
  session::CommonOptions common;
  common.data_dir = data_dir;
  const Nvml nvml;
  const RunSettings settings = session::make_settings(common, nvml.device_count(), nvml.why_unavailable());
  if (!data_dir.empty()) session::remove_abandoned_scratch(data_dir);
  session::Session audit(settings, std::nullopt, interrupt, &nvml);
  audit.set_step_demand(session::run_step_demand(extras));
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& id : audit_probe_ids(*extras.profile, !job_python.empty())) {
    const ProbeSpec* spec = probe_registry().find(id);
    if (spec == nullptr || interrupt.load()) continue;
    if (const auto left_out = session::left_out_by_profile(*spec, extras, false)) {
      probes.push_back(probe_entry(id, Outcome::skipped(*left_out), nlohmann::json::object(), 0, {}, {}, nlohmann::json::object()));
      continue;
    }
    std::fprintf(stderr, "learn --audit: %s ...\n", id.c_str());
    session::EntryRequest request;
    request.param_texts = session::probe_params_for(*spec, extras);
    probes.push_back(audit.run_entry(*spec, session::Placement::child, request));
  }
  return probes;
}

}  // namespace nodeaudit::cli
