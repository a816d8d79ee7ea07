#include "harness/session/workload.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "harness/core/output_place.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/units.hpp"
#include "harness/node/container.hpp"
#include "harness/node/procfs.hpp"
#include "harness/report/prometheus.hpp"
#include "harness/score/model.hpp"
#include "harness/score/step_demand.hpp"

namespace nodeaudit::session {

namespace {
// Checked before measuring, so a bad path costs no probe time.
void check_prometheus_path(const std::string& path) {
  namespace fs = std::filesystem;
  check_output_place("--prometheus", path, Existing::allow);  // a link, a missing or read-only directory
  std::error_code ec;
  if (fs::exists(path, ec) && procfs::read_first_line(path).value_or("") != report::prometheus_header)
    throw UsageError("--prometheus " + path, "exists and was not written by nodeaudit; it is never overwritten");
}
}  // namespace

std::string prepare_run_extras(const std::string& profile_name_or_path, RunExtras& extras) {
  if (!extras.prometheus.empty()) check_prometheus_path(extras.prometheus);
  if (!extras.python.empty() && access(extras.python.c_str(), X_OK) != 0)
    throw UsageError("--python " + extras.python, "is not an executable file; give the path of a Python interpreter");
  if (!extras.price_per_hour.empty()) {
    const std::optional<double> price = parse_finite_number(extras.price_per_hour);
    if (!price || *price <= 0)
      throw UsageError("--price-per-hour " + extras.price_per_hour, "must be a positive number (price of the node per hour)");
    if (profile_name_or_path.empty()) throw UsageError("--price-per-hour", "needs --profile: the cost is of one run of a workload");
    extras.cost.price_per_hour = *price;
  }
  if (!extras.target_gpus.empty()) {
    if (profile_name_or_path.empty())
      throw UsageError("--target-gpus " + extras.target_gpus, "needs --profile: the GPUs are judged for a workload");
    extras.target = score::parse_target_gpus(extras.target_gpus);
  }
  if (!extras.expect.empty() && profile_name_or_path.empty())
    throw UsageError("--expect " + extras.expect, "needs --profile: the grades are part of the assessment");
  if (profile_name_or_path.empty()) return "";
  if (std::filesystem::path(profile_name_or_path).extension() == ".json") {
    extras.learned = std::make_shared<const score::PredictJob>(score::load_predict_job(profile_name_or_path));
    extras.profile = extras.learned->profile;
  } else {
    extras.profile = score::load_profile(profile_name_or_path);
  }
  if (!extras.expect.empty()) score::apply_expect_file(*extras.profile, extras.expect);
  if (extras.target) score::check_target_serves(*extras.target, *extras.profile);
  return extras.profile->source_path;
}

namespace {
bool declares_param(const ProbeSpec& spec, const std::string& name) {
  return std::any_of(spec.params.begin(), spec.params.end(), [&](const ParamSpec& p) { return p.name == name; });
}

// Memory the page cache may hold for a job here: the available RAM, no more than a memory cgroup's
// limit (the model's test of a data set fitting, made the same way).
double page_cache_room() {
  const auto mem = procfs::read_meminfo();
  double room = mem.count("MemAvailable") ? static_cast<double>(mem.at("MemAvailable")) : 0;
  if (const auto limit = detect_container().limits.memory_limit_bytes) room = std::min(room, static_cast<double>(*limit));
  return room;
}
}  // namespace

bool takes_step_demand(const ProbeSpec& spec) { return declares_param(spec, "workload"); }

StepDemand run_step_demand(const RunExtras& extras) {
  return score::step_demand_of(extras.profile ? *extras.profile : score::load_profile(default_step_profile));
}

StepDemand probe_step_demand(const std::string& probe_id, const std::string& workload, const RunExtras& extras) {
  if (workload.empty()) return run_step_demand(extras);
  try {
    return score::step_demand_of(score::load_profile(workload));
  } catch (const std::exception& e) {
    // The catalogue names the run-wide option; the value came from the probe's --workload here.
    const std::string what = e.what(), run_wide = "--profile " + workload;
    throw UsageError(probe_id, what.rfind(run_wide, 0) == 0 ? "--workload" + what.substr(std::string("--profile").size()) : what);
  }
}

std::map<std::string, std::string> probe_params_for(const ProbeSpec& spec, const RunExtras& extras) {
  std::map<std::string, std::string> texts;
  if (!extras.python.empty())
    for (const ParamSpec& p : spec.params)
      if (p.name == "python") texts["python"] = extras.python;
  if (!extras.profile) return texts;
  // A profile's sample size shapes the probes that emulate its data loader, when they take it; the
  // JPEG size only matters for a workload that decodes JPEGs on the CPU.
  const double sample_bytes = extras.profile->data.sample_bytes;
  const bool decodes_jpeg = extras.profile->data.decode == score::DecodeKind::jpeg;
  for (const ParamSpec& p : spec.params) {
    const bool applies = p.name == "sample-size" || (p.name == "image-size" && decodes_jpeg);
    if (sample_bytes >= 1 && applies) texts[p.name] = fmt::format("{}", static_cast<long long>(std::llround(sample_bytes)));
  }
  // A job reading np.memmap windows is emulated by windows of one mapped file as large as its data
  // set (up to 4 GiB: beyond that the share of windows the read-around has already brought in is
  // small either way), so the page faults, not whole-file reads, are what is measured.
  const score::DataSpec& data = extras.profile->data;
  const bool per_sample_reads = data.access != score::AccessPattern::sequential_shards;
  if (data.access == score::AccessPattern::memmap && declares_param(spec, "read") && declares_param(spec, "file-size")) {
    texts["read"] = "mmap";
    texts["file-size"] = fmt::format("{}", static_cast<long long>(std::llround(std::min(data.dataset_bytes, 4.0 * (1ull << 30)))));
  }
  // A data set that fits the page cache is read from it after the first epoch: the sample reads are
  // measured buffered then (cache=page), the figure the model takes for such a job.
  if (per_sample_reads && declares_param(spec, "read") && declares_param(spec, "direct") && data.dataset_bytes <= page_cache_room())
    texts["direct"] = "false";
  // A probe that emulates a node's training step (it declares `gpus-in-node`) emulates the target
  // GPUs, with the figures the assessment uses. A GPU given as a file is not in the GPU table the
  // probe reads: its compute time and busbw are given.
  if (declares_param(spec, "gpus-in-node") && extras.target) {
    const score::TargetGpus& target = *extras.target;
    texts["gpus-in-node"] = std::to_string(target.count);
    if (target.file.empty()) {
      texts["emulate-compute"] = target.model.name;
    } else {
      const auto rate = target.model.gemm_rate(extras.profile->model.dtype);  // present: check_target_serves
      const score::Profile& profile = *extras.profile;
      const double tflop_per_gpu = profile.samples_per_step_per_gpu() * profile.flops_per_sample() / 1e12;
      const double compute_s = profile.compute_time_s(tflop_per_gpu, rate->value);
      texts["compute-time"] = fmt::format("{:.9f}s", compute_s);
      if (target.model.allreduce)
        texts["busbw"] = fmt::format("{}", target.model.allreduce->nearest(extras.profile->gradient_bytes()).busbw_gbps);
    }
  }
  return texts;
}

std::optional<std::string> left_out_by_profile(const ProbeSpec& spec, const RunExtras& extras, bool only_given) {
  if (only_given || !extras.profile) return std::nullopt;
  if (!spec.left_out_for_demand) return std::nullopt;
  const std::string why = spec.left_out_for_demand(score::step_demand_of(*extras.profile));
  if (why.empty()) return std::nullopt;
  return why;
}

int assess_run(nlohmann::json& doc, const RunExtras& extras) {
  if (!extras.profile) return 0;
  doc["assessment"] = assess_workload(extras, doc);
  return score::exit_code_for(doc["assessment"]);
}

nlohmann::json assess_workload(const RunExtras& extras, const nlohmann::json& result) {
  score::JobDemand job;
  job.profile = &*extras.profile;
  if (extras.learned && extras.learned->measured) {
    job.measured = &*extras.learned->measured;
    job.job_node = &extras.learned->job_node;
  }
  return score::assess(job, result, extras.cost, extras.target ? &*extras.target : nullptr);
}

std::string render_run_assessment(const nlohmann::json& doc) {
  if (!doc.contains("assessment") || doc["assessment"].is_null()) return "";
  return "\n" + score::render_assessment(doc["assessment"]) + "\n";
}

std::string render_run_summary(const nlohmann::json& doc) {
  if (!doc.contains("assessment") || doc["assessment"].is_null()) return "";
  return score::render_summary(doc["assessment"]);
}

void write_run_side_outputs(const nlohmann::json& doc, const RunExtras& extras) {
  if (!extras.prometheus.empty()) report::write_prometheus_textfile(doc, extras.prometheus);
}

}  // namespace nodeaudit::session
