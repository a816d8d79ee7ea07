#include "harness/score/predict.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "harness/core/errors.hpp"
#include "harness/core/input_file.hpp"
#include "harness/core/result.hpp"
#include "harness/score/model.hpp"
#include "harness/score/resource_probes.hpp"
#include "harness/score/score.hpp"

namespace nodeaudit::score {

using nlohmann::json;
namespace R = resource_figure;

namespace {

constexpr const char* learn_probe = "learn.job";

const json* learn_entry(const json& doc) {
  if (!doc.is_object() || !doc.contains("probes") || !doc["probes"].is_array()) return nullptr;
  for (const auto& probe : doc["probes"])
    if (probe.is_object() && probe.value("id", "") == learn_probe) return &probe;
  return nullptr;
}

PredictJob job_from_learn_result(const json& doc, const std::string& path) {
  const json& entry = *learn_entry(doc);
  const json details = entry.value("info", json::object());
  if (!details.contains("profile_toml") || !details["profile_toml"].is_string())
    throw UsageError(path, "is a learn result without a learned profile (the job did not take all its steps, or an older "
                           "nodeaudit wrote it); learn the job again to completion");
  PredictJob job;
  job.source = path;
  job.profile = parse_profile(details["profile_toml"].get<std::string>(), path + " (learned profile)");
  job.profile.source_path = path;
  job.name = job.profile.name;
  job.measured = job_measured_from_json(details.value("job_measured", json()), path);
  job.job_node = doc;
  return job;
}

}  // namespace

bool is_learn_result(const json& doc) { return learn_entry(doc) != nullptr; }

PredictJob load_predict_job(const std::string& path) {
  const std::filesystem::path file(path);
  if (file.extension() == ".toml" || (!file.has_extension() && !file.has_parent_path())) {
    PredictJob job;
    job.profile = load_profile(path);
    job.name = job.profile.name;
    job.source = path;
    return job;
  }
  const json doc = load_result_file(path);
  if (!is_learn_result(doc))
    throw UsageError(path, "is a node's result, not a job; give a learn result (`nodeaudit learn -- COMMAND`) or a profile "
                           "(a shipped name or FILE.toml) as the job");
  return job_from_learn_result(doc, path);
}

std::string probe_for_resource(const std::string& resource, const Profile& profile) {
  if (resource == "compute") return R::compute.probe;
  if (resource == "gpu_memory_bandwidth") return R::gpu_memory_bandwidth.probe;
  if (resource == "storage") return storage_figure_for(profile.data.access == AccessPattern::sequential_shards).probe;
  if (resource == "cpu_decode")
    return profile.data.loader == LoaderKind::pytorch ? std::string(R::framework_loader.probe) + "," + R::native_decode.probe
                                                      : R::native_decode.probe;
  if (resource == "cpu") return R::native_decode.probe;  // the per-core rate that carries CPU time across CPU models
  if (resource == "host_to_device") return R::host_to_device.probe;
  if (resource == "communication") return R::communication.probe;
  if (resource == "checkpoint") return R::checkpoint.probe;
  return "";
}

namespace {

json not_judged_parts(const PredictJob& job, const NodeModel& model) {
  json parts = json::array();
  for (const Stage& stage : model.stages) {
    if (!stage.needed || !stage.not_judged) continue;
    const std::string probe = probe_for_resource(stage.resource, job.profile);
    // A memmap job's storage is measured the way it reads (--read mmap, its data set's size): the
    // run takes both from the job given as its profile.
    const bool shaped_by_job = stage.resource == "storage" && job.profile.data.access == AccessPattern::memmap && !job.source.empty();
    parts.push_back({{"resource", stage.resource},
                     {"why", *stage.not_judged},
                     {"probe", probe},
                     {"to_measure", "nodeaudit run --only " + probe + (shaped_by_job ? " --profile " + job.source : "")}});
  }
  return parts;
}

json cost_of(const PredictJob& job, const NodeModel& model, const CostOptions& cost) {
  if (!cost.price_per_hour) return nullptr;
  const auto samples = job.profile.target_run_samples();
  if (!samples) return {{"not_judged", "the job's profile gives no target run length (target_samples)"}};
  if (model.step.not_judged || !model.step.unmeasured.empty() || !(model.step.samples_per_s > 0))
    return {{"not_judged", "the step is not judged on this node"}};
  // A learned job's saves are in its step; a profile's are the checkpoint stall share.
  const double stall = job.measured ? 0 : model.checkpoint.wall_share;
  const double hours = *samples / model.step.samples_per_s / 3600 * (1 + stall);
  const bool tokens = job.profile.training.target_tokens.has_value();
  json out = to_json(run_cost(cost, hours, tokens ? *job.profile.training.target_tokens : *samples, tokens ? "tokens" : "samples"), cost);
  out["target"] = fmt::format("{:.4g} samples: the profile's target_samples", *samples);
  return out;
}

// What sets the step: a loader stage the GPU side waits for, else compute; not judged while a needed
// stage was not measured.
std::string limiting_resource(const StepModel& step) {
  if (!step.unmeasured.empty()) return "not judged";
  const bool waits = step.loader_serial || step.loader_s > step.gpu_busy_s + step.exposed_comm_s;
  return waits && !step.loader_resource.empty() ? step.loader_resource : "compute";
}

}  // namespace

json predict_on_node(const PredictJob& job, const json& node, const std::string& node_name, const CostOptions& cost,
                     const std::optional<ColdRun>& cold_run) {
  JobDemand demand;
  demand.profile = &job.profile;
  demand.cold_run = cold_run;
  if (job.measured) {
    demand.measured = &*job.measured;
    demand.job_node = &job.job_node;
  }
  const NodeModel model = build_model(demand, node);
  const StepModel& step = model.step;
  json stages = json::array();
  for (const Stage& stage : model.stages) stages.push_back(to_json(stage, step.not_judged ? 0 : step.step_s));
  json out{{"node", node_name}, {"job", job.name}, {"job_source", job.source},
           {"basis", job.measured ? "the job's own measurements (learn) carried to this node's figures"
                                  : "the profile's declared demand against this node's figures"},
           {"stages", stages}, {"not_judged", not_judged_parts(job, model)}};
  if (cold_run) out["run"] = {{"warmup_steps", cold_run->warmup_steps}, {"steps", cold_run->steps}, {"page_cache_at_start", "cold"}};
  if (step.not_judged) {
    out["step_not_judged"] = *step.not_judged;
  } else {
    out.update({{"step_s", step.step_s},
                {"samples_per_s", step.samples_per_s},
                {"lower_bound", !step.unmeasured.empty()},
                {"data_wait_share", step.unmeasured.empty() ? json(step.data_wait_share) : json(nullptr)},
                {"gpu_utilization", step.unmeasured.empty() ? json(step.utilization) : json(nullptr)},
                {"utilization_basis", model.stage("compute")->capacity_metric.find("no GPU on either node") != std::string::npos
                                          ? "compute share of the step (no GPU: CPU wall-clock, not GPU)"
                                          : "compute / step on this node's GPUs"},
                {"limiting", limiting_resource(step)}});
  }
  out["cost"] = cost_of(job, model, cost);
  return out;
}

}  // namespace nodeaudit::score
