// The scaling curve of host.decode: every stage at every worker count, then the per-core and
// per-GPU figures derived from the largest count. Separate from the probe body so tests can drive
// it with a small corpus and stand-in workers.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/core/context.hpp"
#include "harness/core/probe.hpp"
#include "kernels/host/decode_stages.hpp"

namespace nodeaudit::host {

using WorkerFactory = std::function<std::unique_ptr<Workers>(int count)>;

struct ScalingResult {
  Outcome outcome;
  int largest_workers = 0;                       // the count the per-core figures come from
  std::map<Stage, Measurement> at_largest;       // measurements at that count
};

// Records images_per_s [workers, stage] for each count and stage. Each repetition runs every worker
// through `images_per_worker` images; ops = images_per_worker x workers. Pin failures become warn
// findings and the measurement goes on; decode failures are a fail finding and Outcome::failed.
ScalingResult measure_scaling(ProbeContext& ctx, const StageInputs& inputs, const std::vector<int>& counts, int crop_size,
                              int images_per_worker, const WorkerFactory& make_workers);

// images_per_s_per_core [stage]: each repetition's images/s at `workers` workers divided by `workers`.
void record_per_core(ProbeContext& ctx, const std::map<Stage, Measurement>& at_largest, int workers);

// images_per_s_per_gpu [stage=full]: full-pipeline images/s with every CPU busy divided by the GPUs
// that share those CPUs. Not recorded (an info finding says why) without GPUs, or when the largest
// measured count is not every CPU this process may use.
void record_per_gpu(ProbeContext& ctx, const Measurement& full_at_largest, int workers, int cpus, int gpus,
                    const std::string& why_no_gpu);

}  // namespace nodeaudit::host
