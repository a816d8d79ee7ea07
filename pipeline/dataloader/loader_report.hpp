// What host.dataloader's Python side reports (torch_loader_sweep.py), parsed strictly: every line
// must be one JSON object of a known kind with the fields that kind needs, or the whole report is
// refused naming the line. And the sweep's arithmetic: which worker counts to run on this many
// CPUs, and the knee of the curve.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeaudit::dataloader {

struct LoaderPoint {
  std::string decoder;  // pil, torchvision, raw
  int workers = 0;
  int batch = 0;
  int batches = 0;
  std::uint64_t samples = 0;
  double seconds = 0;
  double cpu_seconds = 0;
  double samples_per_s() const { return seconds > 0 ? static_cast<double>(samples) / seconds : 0; }
  double cpu_us_per_sample() const { return samples > 0 ? cpu_seconds * 1e6 / static_cast<double>(samples) : 0; }
};

// One emulated training step of --train-steps (pipeline.step --loader pytorch).
struct StepRecord {
  int step = 0;
  int samples = 0;
  double data_wait_s = 0, compute_s = 0, comm_s = 0;
  double end_s = 0;  // from the loop's start
};

// The CPU the loader used over the steps after the first (the workers were up).
struct TrainCpu {
  int steps = 0;
  std::uint64_t samples = 0;
  double seconds = 0, main_cpu_seconds = 0, worker_cpu_seconds = 0;
  int workers = 0, cpus = 0;
  // What this loader could deliver if the GPU never made it wait: samples over the longest of the
  // three CPU bounds: all its CPU time spread over every CPU, the workers' over the workers (one
  // core each at most), the main process's (one thread collects the batches). 0 without samples.
  double capacity_samples_per_s() const;
};

struct LoaderReport {
  std::optional<std::string> unavailable;  // "torch: ModuleNotFoundError: No module named 'torch'"
  nlohmann::json loader = nlohmann::json::object();  // versions, cpus, pin_memory
  std::vector<LoaderPoint> points;
  std::vector<std::string> notes;  // decoders not measured and why
  std::vector<StepRecord> steps;   // --train-steps, in order
  std::optional<TrainCpu> train_cpu;
  bool done = false;               // the last line said so: the sweep completed
};

struct ParsedReport {
  LoaderReport report;  // the lines before an error are kept
  std::string error;    // "line 3: ...: <the line>"; empty when every line parsed
};
ParsedReport parse_loader_report(const std::string& text);

// The worker counts to run: `asked` (each 1..1024) without those above `cpus`, keeping the
// smallest when none fits. `capped` says what was left out and why; empty when nothing was.
struct WorkerPlan {
  std::vector<int> counts;
  std::string capped;
};
WorkerPlan plan_workers(const std::vector<int>& asked, int cpus);

// "1,2,4" -> {1, 2, 4}, or an error naming the bad entry (not a whole number, outside 1..1024).
std::optional<std::string> parse_worker_list(const std::string& text, std::vector<int>& counts);

// The knee (stats.hpp's knee_workers: the fewest workers within 10% of the best samples/s) among
// `points` (one decoder's); 0 when there are none.
int knee_workers(const std::vector<LoaderPoint>& points);

}  // namespace nodeaudit::dataloader
