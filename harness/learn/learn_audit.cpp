// `learn --audit`: once the job is learned, this node's probes that the scorer's step for the learned
// profile rests on, run by the session engine exactly as `run --profile` runs them (each in its own
// process, with its deadline and telemetry: session/profile_probes.hpp), into the learn result beside
// the job's own figures. What is learn's here is only which probes.
#include "harness/learn/learn_run.hpp"
#include "harness/score/resource_probes.hpp"
#include "harness/session/profile_probes.hpp"

namespace nodeaudit::learn {

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
  session::ProfileProbesRequest request;
  request.profile_path = profile_path;
  request.data_dir = data_dir;
  request.python = job_python;
  request.probe_ids = [has_python = !job_python.empty()](const score::Profile& profile) { return audit_probe_ids(profile, has_python); };
  request.announce = "learn --audit";
  return session::run_profile_probes(request, interrupt);
}

}  // namespace nodeaudit::learn
