#include "harness/learn/data_wait_check.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/score/model.hpp"

namespace nodeaudit::learn {

namespace {

std::string ms(double s) { return fmt::format("{:.3g} ms", s * 1e3); }

// The slowest judged loader stage (storage, CPU decode, host-to-device) in seconds per step for the
// profile's samples on the node's GPUs, or why none could be judged.
struct LoaderTime {
  double time_s = 0;
  std::string resource;
  std::string unmeasured;
};

LoaderTime slowest_loader(const score::NodeModel& node) {
  LoaderTime out;
  for (const score::Stage& stage : node.stages) {
    if (!stage.needed || stage.resource == "compute" || stage.resource == "gpu_memory_bandwidth" || stage.resource == "communication") continue;
    if (!stage.judged()) {
      out.unmeasured += fmt::format("{}{} ({})", out.unmeasured.empty() ? "" : "; ", stage.resource, stage.not_judged.value_or(""));
      continue;
    }
    if (stage.time_s >= out.time_s) out.time_s = stage.time_s, out.resource = stage.resource;
  }
  return out;
}

// No GPU compute figure: the scorer's loader time for the samples this job's ranks take per step,
// against the compute this job measured per step (the loader overlaps compute, as in the scorer).
void predict_from_measured_compute(const LearnedJob& job, const score::NodeModel& node, DataWaitCheck& check) {
  const LoaderTime loader = slowest_loader(node);
  if (loader.resource.empty()) {
    check.basis = "not predicted: " + (loader.unmeasured.empty() ? std::string("the result holds no storage, decode or host-to-device figure")
                                                                  : "this node's loader figures are missing: " + loader.unmeasured);
    return;
  }
  const double job_samples = job.timing.samples_per_step * std::max(job.world_size, 1);
  const double node_samples = std::max(node.shape.samples_per_node, 1);
  const double loader_s = loader.time_s * job_samples / node_samples;
  const double compute_s = job.timing.step_time_s * (1 - job.timing.shares.data_wait);
  const double step_s = std::max(loader_s, compute_s);
  if (!(step_s > 0)) {
    check.basis = "not predicted: no measured step time";
    return;
  }
  check.predicted_share = std::max(0.0, loader_s - compute_s) / step_s;
  check.basis = fmt::format(
      "scorer's loader model from this node's figures: {} {} per step, against this job's measured compute {} per step "
      "(the scorer's own step needs this node's GPU figure: {})",
      loader.resource, ms(loader_s), ms(compute_s), node.step.not_judged.value_or(""));
  if (!loader.unmeasured.empty()) check.basis += "; assumed to keep up: " + loader.unmeasured;
}

}  // namespace

DataWaitCheck check_data_wait(const LearnedJob& job, const score::Profile& profile, const nlohmann::json& result,
                              const std::string& source) {
  DataWaitCheck check;
  check.measured_share = job.timing.shares.data_wait;
  check.source = source;
  const score::NodeModel node = score::build_model(profile, result);
  if (node.step.not_judged) {
    predict_from_measured_compute(job, node, check);
    return check;
  }
  check.predicted_share = node.step.data_wait_share;
  check.scorer_step = true;
  check.basis = node.step.loader_resource.empty()
                    ? fmt::format("scorer, from this node's figures: no loader stage needed or measured, GPU busy {}", ms(node.step.gpu_busy_s))
                    : fmt::format("scorer, from this node's figures: {} {} per step against GPU busy {} and exposed communication {}",
                                  node.step.loader_resource, ms(node.step.loader_s), ms(node.step.gpu_busy_s), ms(node.step.exposed_comm_s));
  if (!node.step.unmeasured.empty()) check.basis += fmt::format("; assumed to keep up: {}", fmt::join(node.step.unmeasured, "; "));
  return check;
}

std::string data_wait_line(const DataWaitCheck& check) {
  const std::string measured = fmt::format("measured {:.1f}% (this job)", 100 * check.measured_share);
  if (!check.predicted_share) return measured + " / " + check.basis;
  return fmt::format("{} / predicted {:.1f}% ({})", measured, 100 * *check.predicted_share,
                     check.scorer_step ? "scorer, from this node's figures" : "scorer's loader model, from this node's figures, against this job's compute");
}

nlohmann::json to_json(const DataWaitCheck& check) {
  return {{"measured_share", check.measured_share},
          {"predicted_share", check.predicted_share ? nlohmann::json(*check.predicted_share) : nlohmann::json(nullptr)},
          {"scorer_step", check.scorer_step},
          {"basis", check.basis},
          {"node_result", check.source}};
}

}  // namespace nodeaudit::learn
