// The one GPU table: per GPU model, the figures a healthy node of that model reaches (published
// measurements: MAMF matmul, nvbandwidth, BabelStream-style copy, nccl-tests all-reduce) and the
// datasheet peaks beside them. Every value carries its source and says whether it was measured
// somewhere or is a datasheet peak. Three readers: `--target-gpus` (judging a host for GPUs it does
// not have), pipeline.step's emulated compute, and gpu.gemm / gpu.memory-bandwidth's percent of
// peak. No figure here was measured on the user's node: whatever reads one labels it with
// SourcedValue::label(), `published measurement (another node: SOURCE)` or `datasheet peak (SOURCE)`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nodeaudit::score {

struct SourcedValue {
  double value = 0;
  std::string source;     // who published it, where, on what stack
  bool measured = false;  // a published measurement (true) or a datasheet figure (false)
  bool derived = false;   // a measurement of a sibling figure taken for this one (said in the source)
  bool from_peak = false; // a datasheet peak scaled by the published measured/peak ratio (said in the source)
  std::string kind() const { return measured ? "published measurement" : "datasheet peak"; }
  // "published measurement (another node: SOURCE)" or "datasheet peak (SOURCE)".
  std::string label() const {
    return measured ? "published measurement (another node: " + source + ")" : "datasheet peak (" + source + ")";
  }
};

// nccl-tests all_reduce_perf bus bandwidth at one message size.
struct AllreducePoint {
  double bytes = 0;
  double busbw_gbps = 0;
};

struct AllreduceCurve {
  std::vector<AllreducePoint> points;  // ascending size; one point for a bound without a curve
  int gpus = 0;                        // GPUs the curve was measured over
  std::string source;
  bool measured = false;
  // busbw at the measured size nearest (in ratio) to `bytes`, and that size.
  AllreducePoint nearest(double bytes) const;
};

struct GpuModel {
  std::string name;                       // as --target-gpus spells it: "h100", "a100-80gb"
  std::vector<std::string> aliases;       // other accepted spellings: "a100"
  std::string description;                // "H100 SXM5 80 GB (HGX)"
  std::vector<std::string> device_names;  // cudaDeviceProp::name of this model
  int max_per_node = 8;                   // GPUs of one node (an HGX board holds 8)
  std::map<std::string, SourcedValue> peak_tflops;  // dense datasheet peaks per dtype (fp64 ... fp8)
  std::map<std::string, SourcedValue> gemm_tflops;  // published dense GEMM rates per dtype
  std::optional<SourcedValue> memory_bytes;         // GPU memory per GPU, as the driver reports it
  std::optional<SourcedValue> hbm_peak_gbps;
  std::optional<SourcedValue> hbm_gbps;             // published device-memory copy bandwidth
  std::optional<SourcedValue> h2d_gbps;             // pinned host-to-device per GPU
  std::optional<AllreduceCurve> allreduce;

  // The GEMM rate for a dtype a step is modelled with: the published measurement, else the peak
  // scaled by gemm_peak_margin (a profile's model_efficiency is a fraction of a measured GEMM rate,
  // and no GEMM reaches the datasheet peak), with `from_peak` set.
  std::optional<SourcedValue> gemm_rate(const std::string& dtype) const;
  // The device-memory bandwidth: the published measurement, else the peak.
  std::optional<SourcedValue> memory_bandwidth() const;
};

const std::vector<GpuModel>& gpu_table();

// The mean published-GEMM / datasheet-peak ratio over the table's models that have both for a
// dtype (derived figures left out); every dtype's pairs when none has that dtype.
struct PeakMargin {
  double mean_ratio = 1, min_ratio = 1, max_ratio = 1;
  std::string models;  // "h100 bf16 0.80, a100-80gb bf16 0.86"
};
PeakMargin gemm_peak_margin(const std::string& dtype);
// By name or alias, case-insensitive; nullptr when unknown.
const GpuModel* find_gpu_model(const std::string& name);
// By the exact name the CUDA runtime reports; nullptr when unknown.
const GpuModel* find_gpu_model_by_device(const std::string& device_name);
std::string known_gpu_models();  // "h100, h200, a100-80gb (a100), ..."

}  // namespace nodeaudit::score
