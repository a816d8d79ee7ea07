// pipeline.step's figures: what it records, in which unit, and which way is better.
// Dependency-free (figures.hpp only): compiled into the probe catalogue that the scorer and the
// reporters link.
#include "harness/core/figures.hpp"

namespace nodeaudit {

std::vector<ProbeFigures> pipeline_probe_figures() {
  const Better higher = Better::higher, lower = Better::lower;
  return {
      {"pipeline.step",
       "A real overlapped training step: measured accelerator utilization, samples/s, step time "
       "and where each step's time went, beside the scorer's prediction.",
       ProbeRole::measurement,
       {{"au", unit::percent, higher, {}, "accelerator utilization: compute time / (wall time - checkpoint stalls)"},
        {"au_with_checkpoint", unit::percent, higher, {}, "compute time / wall time, checkpoint stalls included"},
        {"samples_per_s", unit::samples_per_s, higher, {}, "samples trained per second over the timed steps"},
        {"data_wait_s", unit::s, lower, {}, "time the step waited for the loader's next batch"},
        {"step_time", unit::s, lower, {}, "wall time of one timed step (each timed step is one sample of the statistics)"},
        {"stage_busy_pct", unit::percent, std::nullopt, {"stage"},
         "share of the wall time spent in the stage: compute's is better high, every other stage's low"},
        {"host_to_device_bandwidth", unit::gbps, higher, {}, "real GPUs only: the timed steps' batch bytes / their copy time, slowest GPU"},
        {"loader_capacity", unit::samples_per_s, higher, {}, "--loader pytorch only: samples / the longest of the DataLoader's CPU bounds over the steps after the first (info.framework_loader)"},
        {"predicted_utilization", unit::percent, higher, {}, "the model's utilization for the node this step ran on, from the figures its own step measured (info.prediction_inputs), added after the measurement"}},
       "`stage`: compute, data_wait, host_to_device (real GPUs only), communication, checkpoint, other, "
       "loader_read and loader_decode (native loader only)."},
  };
}

}  // namespace nodeaudit
