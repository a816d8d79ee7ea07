#include "harness/learn/learn_document.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "harness/core/result.hpp"
#include "harness/core/stats.hpp"
#include "harness/learn/learned_profile.hpp"

namespace nodeaudit::learn {

using nlohmann::json;

namespace {

// Every field learn gives, under its profile key, as { "value", "how" }.
json fields_json(const LearnedJob& job) {
  json out = json::object();
  for (const score::ProfileField& field : score::profile_fields()) {
    const std::optional<LearnedFieldValue> learned = learned_field(job, field.id);
    if (!learned) continue;
    const auto* number = std::get_if<double>(&learned->value);
    out[std::string(field.key)] = {{"value", number ? json(*number) : json(std::get<std::string>(learned->value))},
                                   {"how", learned->how}};
  }
  return out;
}

json timeline_json(const JobRecords& records, double micro_batch) {
  json out = json::array();
  if (records.ranks.empty()) return out;
  for (const auto& s : records.ranks.front().value("timeline", json::array())) {
    const double from_batches = s.value("batch_samples", 0.0);
    out.push_back({{"step", s.value("step", 0)}, {"phase", s.value("phase", "")}, {"duration_s", s.value("duration_s", 0.0)},
                   {"data_wait_s", s.value("data_wait_s", 0.0)}, {"backward_s", s.value("backward_s", 0.0)},
                   {"optimizer_s", s.value("optimizer_s", 0.0)}, {"checkpoint_s", s.value("checkpoint_s", 0.0)},
                   {"main_cpu_s", s.value("main_cpu_s", 0.0)}, {"fetch_cpu_s", s.value("fetch_cpu_s", 0.0)},
                   {"backward_calls", s.value("backward_calls", 0)},
                   {"samples", from_batches > 0 ? from_batches : micro_batch * s.value("backward_calls", 0.0)},
                   {"end_s", s.value("end_s", 0.0)}});
    if (s.contains("began_at")) out.back()["began_at"] = s["began_at"];  // the first step: where its time starts
  }
  return out;
}

std::vector<Metric> step_metrics(const LearnedJob& job, const JobLoad& load) {
  std::vector<Metric> metrics;
  const LearnedTiming& t = job.timing;
  if (!t.measured_step_s.empty()) {
    metrics.push_back({"step_time", unit::s, Better::lower, {}, t.measured_step_s});
    std::vector<double> rate;
    for (double d : t.measured_step_s) rate.push_back(d > 0 ? t.samples_per_step * job.world_size / d : 0);
    metrics.push_back({"samples_per_s", unit::samples_per_s, Better::higher, {}, rate});
    std::vector<double> wait;
    for (double share : t.data_wait_share_per_step) wait.push_back(100 * share);
    metrics.push_back({"data_wait_share", unit::percent, Better::lower, {}, wait});
  }
  std::vector<double> cpu_pct;
  for (double c : load.cpu_cores) cpu_pct.push_back(100 * c);
  if (!cpu_pct.empty()) metrics.push_back({"process_cpu", unit::percent, Better::lower, {{"window", load.window}}, cpu_pct});
  std::vector<double> read_gbps;
  for (double r : load.read_bytes_per_s) read_gbps.push_back(r / 1e9);
  if (!read_gbps.empty()) metrics.push_back({"process_read_bandwidth", unit::gbps, Better::higher, {{"window", load.window}}, read_gbps});
  for (const auto& g : load.gpus) {
    const Labels labels{{"gpu", std::to_string(g.index)}, {"window", load.window}};
    if (!g.util_pct.empty()) metrics.push_back({"gpu_utilization", unit::percent, Better::higher, labels, g.util_pct});
    if (!g.mem_used_bytes.empty()) metrics.push_back({"gpu_memory_used", unit::bytes, Better::lower, labels, g.mem_used_bytes});
  }
  return metrics;
}

// Peak allocated memory per rank (torch.cuda.max_memory_allocated, in the module) and what NVML
// sampled; each said not measured, with why, when it was not.
json gpu_json(const JobRun& run, const JobLoad& load) {
  json peaks = json::array();
  for (const auto& rank : run.records.ranks)
    if (rank.contains("gpu") && rank["gpu"].is_object()) peaks.push_back(rank["gpu"]);
  json out;
  if (!peaks.empty()) out["peak_allocated"] = peaks;
  else out["peak_allocated_not_measured"] = load.gpu_not_measured.rfind("no GPU", 0) == 0 ? "not measured: " + load.gpu_not_measured
                                                                                           : std::string("not measured: the job did not use CUDA");
  if (!load.gpus.empty()) {
    json telemetry = json::array();
    for (const auto& g : load.gpus)
      telemetry.push_back({{"gpu", g.index}, {"job_processes_found", g.job_context_known}, {"samples", g.util_pct.size()},
                           {"util_pct_median", g.util_pct.empty() ? json(nullptr) : json(median_or_nan(g.util_pct))},
                           {"mem_used_bytes_max", g.mem_used_bytes.empty() ? json(nullptr) : json(*std::max_element(g.mem_used_bytes.begin(), g.mem_used_bytes.end()))}});
    out["telemetry"] = telemetry;
    out["telemetry_window"] = load.window;
  } else {
    out["telemetry_not_measured"] = "not measured: " + load.gpu_not_measured;
  }
  return out;
}

Status status_from(const std::string& text) {
  if (text == "failed") return Status::failed;
  if (text == "timeout") return Status::timeout;
  if (text == "interrupted") return Status::interrupted;
  return Status::ok;
}

}  // namespace

namespace {

// The GPUs the job's processes hold a context on; every GPU when none is found among the processes
// NVML lists (it lists the host's PIDs, which a container does not see) or the driver lists none.
void add_gpu_readings(const ProcessSample& s, std::map<int, GpuLoad>& gpus) {
  const bool job_found = std::any_of(s.gpus.begin(), s.gpus.end(), [](const GpuSample& g) { return g.job_context.value_or(false); });
  for (const auto& g : s.gpus) {
    if (job_found && !g.job_context.value_or(false)) continue;  // another job's GPU
    GpuLoad& load = gpus[g.index];
    load.index = g.index;
    load.job_context_known = job_found;
    if (g.util_pct) load.util_pct.push_back(*g.util_pct);
    if (g.mem_used_bytes) load.mem_used_bytes.push_back(*g.mem_used_bytes);
  }
}

}  // namespace

JobLoad job_load(const JobRun& run) {
  JobLoad load;
  std::map<int, GpuLoad> gpus;
  const bool window = run.measured_from_s && run.measured_to_s && *run.measured_to_s > *run.measured_from_s;
  load.window = window ? "measured steps" : "whole job";
  for (const auto& s : run.samples) {
    if (window && (s.t_s < *run.measured_from_s || s.t_s > *run.measured_to_s + 0.5)) continue;
    load.cpu_cores.push_back(s.cpu_cores);
    if (s.read_bytes_per_s) load.read_bytes_per_s.push_back(*s.read_bytes_per_s);
    if (s.resident_bytes) load.resident_bytes.push_back(*s.resident_bytes);
    add_gpu_readings(s, gpus);
  }
  for (auto& [index, g] : gpus) load.gpus.push_back(std::move(g));
  load.gpu_not_measured = run.gpu_not_measured;
  for (const auto& rank : run.records.ranks)
    if (rank.contains("gpu") && rank["gpu"].is_object()) load.peak_allocated_bytes.push_back(rank["gpu"].value("peak_allocated_bytes", 0.0));

  // No GPU known to be the job's and no rank that used CUDA: the readings are other jobs' GPUs.
  const bool none_found = std::none_of(load.gpus.begin(), load.gpus.end(), [](const GpuLoad& g) { return g.job_context_known; });
  if (none_found && load.peak_allocated_bytes.empty()) load.gpus.clear();
  if (load.gpu_not_measured.empty() && load.gpus.empty()) load.gpu_not_measured = "the job did not use CUDA (no compute context, no rank allocated GPU memory)";
  return load;
}

json learn_probe_entry(const LearnedJob& job, const JobRun& run, const LearnRunInfo& info) {
  const JobLoad load = job_load(run);
  Outcome outcome{status_from(info.status), info.reason};
  const json params = {{"warmup_steps", job.warmup}, {"measured_steps", job.measured}, {"counted_steps", job.counted},
                       {"timeout_s", info.timeout_s}};
  const LearnedTiming& t = job.timing;
  json details = {
      {"command", info.command},
      {"ended_by", run.ended_by},
      {"exit_code", run.exit_code >= 0 ? json(run.exit_code) : json(nullptr)},
      {"signal", run.signal ? json(run.signal) : json(nullptr)},
      {"wall_s", run.wall_s},
      {"steps_done", job.steps_done},
      {"steps_needed", job.steps_needed},
      {"complete", job.complete},
      {"world_size", job.world_size},
      {"step_time_s", t.step_time_s},
      {"samples_per_step_per_rank", t.samples_per_step},
      {"samples_per_s", t.samples_per_s},
      {"shares", {{"data_wait", t.shares.data_wait}, {"backward", t.shares.backward}, {"optimizer", t.shares.optimizer},
                  {"checkpoint", t.shares.checkpoint}, {"forward_and_other", t.shares.other}}},
      {"timeline", timeline_json(run.records, job.fields.micro_batch.value)},
      {"learned", job.steps_done > 0 ? fields_json(job) : json::object()},
      {"distributed", {{"world_size", job.world_size}, {"backend", job.backend}, {"ddp", job.ddp},
                       {"all_reduce_bytes_per_step", job.all_reduce_bytes_per_step}, {"all_reduce_how", job.all_reduce_how}}},
      {"compiled", job.compiled},
      {"load_window", load.window},
      {"notes", job.notes},
      {"problems", run.records.problems},
      {"profile", info.profile_path.empty() ? json(nullptr) : json(info.profile_path)}};
  details["gpu"] = gpu_json(run, load);
  if (!info.data_wait_check.is_null()) details["data_wait_check"] = info.data_wait_check;
  if (!info.job_measured.is_null()) details["job_measured"] = info.job_measured;
  if (!info.profile_toml.empty()) details["profile_toml"] = info.profile_toml;
  if (info.status != "ok") details["last_lines"] = run.last_lines;
  std::vector<Finding> findings;
  for (const auto& note : job.notes) findings.push_back({Severity::info, "learn.not_learned", note});
  return probe_entry({.id = learn_probe_id,
                      .outcome = outcome,
                      .params = params,
                      .duration_s = run.wall_s,
                      .metrics = step_metrics(job, load),
                      .findings = findings,
                      .info = details});
}

}  // namespace nodeaudit::learn
