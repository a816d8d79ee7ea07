// Read-only look-ups into a result document (results/SCHEMA.md): a probe's state, metrics selected
// by name and labels, and the figures of the env block. Nothing here judges; it only finds numbers
// and says where they came from, or why they are missing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeaudit::score {

using LabelFilter = std::map<std::string, std::string>;

// The number at object[key], or nothing when object is not an object or the key holds no number.
std::optional<double> number_at(const nlohmann::json& object, const char* key);

// A probe whose status is `ok` is measured; anything else (absent, skipped, failed, crashed,
// timeout, interrupted) is not, and `why` says so as "<probe> <status>: <reason>", or "<probe>
// skipped" for a skip, whose reason the assessment lists once with the other probes it stopped.
struct ProbeState {
  const nlohmann::json* probe = nullptr;
  std::string why;
  bool measured() const { return probe != nullptr; }
};
ProbeState probe_state(const nlohmann::json& result, const std::string& id);

// One figure taken from the result, with a description of how ("gpu.gemm tflops [dtype=bf16] median,
// min of 8 GPUs") and the labels of the metric it came from.
struct Figure {
  double value = 0;
  std::string source;
  nlohmann::json labels = nlohmann::json::object();
  bool datasheet = false;  // put in place of a measurement by --target-gpus (gpu_table_label in source)
};

// Where a figure comes from, said the same way in every view: a figure nodeaudit measured here is
// `measured on this node`; one from the GPU table (or a --target-gpus file) is either
// `published measurement (another node: SOURCE)` or `datasheet peak (SOURCE)` (SourcedValue::label).
inline constexpr const char* measured_here_label = "measured on this node";
// The mark on a line resting on the GPU table, whose own figures each carry one of the two labels.
inline constexpr const char* gpu_table_label = "GPU table, not measured on this node";
// A probe entry `--target-gpus` wrote from the GPU table instead of a measurement: it carries a
// "datasheet" object, and each metric its "source" (the figure's label). Every figure read from it
// is labelled so.
bool is_datasheet(const nlohmann::json& probe);
// The metric's label: "published measurement (another node: ...)" or "datasheet peak (...)".
std::string datasheet_source(const nlohmann::json& probe, const nlohmann::json& metric);

// The metrics of `probe` named `name` whose labels include every pair of `filter`; a pair whose
// value is "" matches a metric without that label.
std::vector<const nlohmann::json*> select_metrics(const nlohmann::json& probe, const std::string& name,
                                                  const LabelFilter& filter);
double metric_median(const nlohmann::json& metric);
std::string label_of(const nlohmann::json& metric, const std::string& key);

// Smallest per-GPU median (the slowest GPU sets the pace of a synchronous step).
std::optional<Figure> slowest_gpu(const nlohmann::json& probe, const std::string& id, const std::string& name,
                                  const LabelFilter& filter);
// Largest median among the matching series (best worker count, best block size).
std::optional<Figure> best_series(const nlohmann::json& probe, const std::string& id, const std::string& name,
                                  const LabelFilter& filter);
// Per-GPU medians in GPU order.
std::vector<std::pair<std::string, double>> per_gpu_medians(const nlohmann::json& probe, const std::string& name,
                                                            const LabelFilter& filter);

std::string describe_filter(const LabelFilter& filter);

struct EnvFigures {
  int gpus = 0;
  double gpu_memory_total_bytes = 0;
  std::optional<double> ram_total_bytes;
  std::optional<double> ram_available_bytes;
  std::optional<double> cores;
  std::string gpu_status;
  bool gpus_from_target = false;  // env.gpus was written by --target-gpus from the GPU table
  bool limited = false;           // cores or RAM are env.container's usable figures, below the host's
};
EnvFigures env_figures(const nlohmann::json& result);

}  // namespace nodeaudit::score
