#include "kernels/host/decode_scaling.hpp"

#include <fmt/format.h>

namespace nodeaudit::host {
namespace {

std::vector<double> divided(std::vector<double> samples, double by) {
  for (double& s : samples) s /= by;
  return samples;
}

void add_images_rate(ProbeContext& ctx, const std::string& name, std::vector<double> samples, Labels labels) {
  ctx.add_metric(Metric{name, unit::images_per_s, Better::higher, std::move(labels), std::move(samples)});
}

// Decode failures across workers: a fail finding naming the first one; true when there were any.
bool report_failures(ProbeContext& ctx, const std::vector<std::unique_ptr<WorkerState>>& states, int workers) {
  std::uint64_t failures = 0;
  std::string first;
  for (const auto& s : states) {
    failures += s->failures;
    if (first.empty()) first = s->first_error;
  }
  if (failures == 0) return false;
  ctx.add_finding(Severity::fail, "host_decode.decode_error",
                  fmt::format("{} decodes failed at {} workers; first: {}", failures, workers, first));
  return true;
}

// Every stage at one worker count; stops after the first stage whose measurement was cancelled.
std::map<Stage, Measurement> measure_stages(ProbeContext& ctx, const StageInputs& inputs, Workers& workers,
                                            std::vector<std::unique_ptr<WorkerState>>& states, int images_per_worker) {
  const int count = workers.size();
  std::map<Stage, Measurement> at_count;
  for (Stage stage : all_stages) {
    const Measurement m = ctx.repeat(ctx.policy(), [&] {
      workers.run([&](int w) { run_stage(stage, inputs, *states[static_cast<std::size_t>(w)], w, count, images_per_worker); });
      return Work{.ops = static_cast<double>(images_per_worker) * count};
    });
    add_images_rate(ctx, "images_per_s", rate_samples(m, RateKind::ops_per_s), {{"workers", std::to_string(count)}, {"stage", to_string(stage)}});
    at_count[stage] = m;
    if (m.cancelled) break;
  }
  return at_count;
}

}  // namespace

ScalingResult measure_scaling(ProbeContext& ctx, const StageInputs& inputs, const std::vector<int>& counts, int crop_size,
                              int images_per_worker, const WorkerFactory& make_workers) {
  ScalingResult result;
  for (int count : counts) {
    std::unique_ptr<Workers> workers = make_workers(count);
    for (const std::string& e : workers->pin_errors())
      ctx.add_finding(Severity::warn, "host_decode.affinity", e + "; that worker runs unpinned and may migrate between cores");
    // Each worker allocates its own state, so on a NUMA node its buffers sit next to its core.
    std::vector<std::unique_ptr<WorkerState>> states(static_cast<std::size_t>(count));
    workers->run([&](int w) { states[static_cast<std::size_t>(w)] = std::make_unique<WorkerState>(crop_size, 0x5eed0000ull + static_cast<std::uint64_t>(w)); });
    std::map<Stage, Measurement> at_count = measure_stages(ctx, inputs, *workers, states, images_per_worker);
    if (report_failures(ctx, states, count)) {
      result.outcome = Outcome::failed(fmt::format("JPEG decode failed at {} workers (see finding host_decode.decode_error)", count));
      return result;
    }
    if (at_count.size() < std::size(all_stages) || at_count.rbegin()->second.cancelled) {
      result.outcome = Outcome::interrupted();  // per-core figures stay with the last complete count
      return result;
    }
    result.largest_workers = count;
    result.at_largest = std::move(at_count);
  }
  return result;
}

void record_per_core(ProbeContext& ctx, const std::map<Stage, Measurement>& at_largest, int workers) {
  if (workers <= 0) return;
  for (const auto& [stage, m] : at_largest)
    add_images_rate(ctx, "images_per_s_per_core", divided(rate_samples(m, RateKind::ops_per_s), workers), {{"stage", to_string(stage)}});
  ctx.info()["per_core_at_workers"] = workers;
}

void record_per_gpu(ProbeContext& ctx, const Measurement& full_at_largest, int workers, int cpus, int gpus,
                    const std::string& why_no_gpu) {
  if (gpus <= 0) {
    ctx.add_finding(Severity::info, "host_decode.no_gpu",
                    fmt::format("images_per_s_per_gpu not recorded: no GPU on this node ({})",
                                why_no_gpu.empty() ? "NVML reports 0 devices" : why_no_gpu));
    return;
  }
  if (workers != cpus) {
    ctx.add_finding(Severity::info, "host_decode.per_gpu_skipped",
                    fmt::format("images_per_s_per_gpu not recorded: the largest worker count measured ({}) is not every CPU "
                                "this process may use ({}); include {} in --workers",
                                workers, cpus, cpus));
    return;
  }
  add_images_rate(ctx, "images_per_s_per_gpu", divided(rate_samples(full_at_largest, RateKind::ops_per_s), gpus), {{"stage", "full"}});
  ctx.info()["gpus_sharing_cpus"] = gpus;
}

}  // namespace nodeaudit::host
