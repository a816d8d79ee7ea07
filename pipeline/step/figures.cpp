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
        {"step_time", unit::s, lower, {}, "wall time of each timed step"},
        {"stage_busy_pct", unit::percent, std::nullopt, {"stage"},
         "share of the wall time spent in the stage: compute's is better high, every other stage's low"},
        {"host_to_device_bandwidth", unit::gbps, higher, {}, "batch bytes copied to the GPUs per second of copying"},
        {"loader_capacity", unit::samples_per_s, higher, {}, "the framework DataLoader's CPU-bound rate over the steps after the first"},
        {"predicted_utilization", unit::percent, higher, {}, "the scorer's utilization for the same node and step"}}},
  };
}

}  // namespace nodeaudit
