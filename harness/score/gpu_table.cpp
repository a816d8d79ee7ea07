// The figures of the GPU table and where each comes from. Published measurements are preferred
// over peaks because a training step runs at a fraction of what a GEMM reaches, not of what the
// datasheet prints (profiles' model_efficiency is a fraction of the measured GEMM rate). Where no
// measurement was published the datasheet peak stands in, and says so.
//
// Sources (each read 2026-12; the date is in every source text):
// - Datasheets: NVIDIA H100, H200, A100, L40S Tensor Core GPU datasheets; dense figures (the
//   datasheets print the 2:4-sparsity figure, twice the dense one). NVIDIA does not number their
//   revisions; the text says the date they were read.
// - GPU memory: nvidia-smi's memory.total of the model, as printed in public nvidia-smi outputs of
//   nodes with that GPU (driver_total below); no single document, said so in the text.
// - MAMF: the "Maximum Achievable Matmul FLOPS" table of stas00/ml-engineering
//   (compute/accelerator/README.md): the best dense bf16 matmul found by mamf-finder.py.
// - Azure ND v4/v5: samuel-bohman/AI-benchmarking-guide, Azure_Results/ND_{A100_v4,H100_v5,H200_v5}
//   _results.md: cuBLASLt GEMM, HBM copy (BabelStream kernels), nvbandwidth host-to-device (CE
//   memcpy, one GPU at a time), nccl-tests AllReduce busbw in place over the VM's 8 GPUs.
#include "harness/score/gpu_table.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace nodeaudit::score {

namespace {

SourcedValue measured(double value, std::string source) { return {value, std::move(source), true, false}; }
SourcedValue derived(double value, std::string source) { return {value, std::move(source), true, true}; }
SourcedValue peak(double value, std::string source) { return {value, std::move(source), false, false}; }

// GPU memory as the driver reports it (nvidia-smi memory.total, as public nvidia-smi outputs of
// this model show it): the HBM parts' "80 GB" is 80 GiB less the driver's reserve. What a process
// can allocate is lower again by its CUDA context (gpu.memory-capacity measures that on a node).
SourcedValue driver_total(double mib, const std::string& datasheet) {
  return measured(mib * 1024 * 1024,
                  fmt::format("nvidia-smi memory.total {:.0f} MiB as public nvidia-smi outputs of this model print it, "
                              "no single document, read 2026-12 ({}); allocatable is lower by the CUDA context",
                              mib, datasheet));
}

std::map<std::string, SourcedValue> peaks(const std::string& datasheet, std::optional<double> fp64, double fp32,
                                          double tf32, double fp16, double bf16, std::optional<double> fp8) {
  std::map<std::string, SourcedValue> out{{"fp32", peak(fp32, datasheet)},
                                          {"tf32", peak(tf32, datasheet)},
                                          {"fp16", peak(fp16, datasheet)},
                                          {"bf16", peak(bf16, datasheet)}};
  if (fp64) out["fp64"] = peak(*fp64, datasheet);
  if (fp8) out["fp8"] = peak(*fp8, datasheet);
  return out;
}

// nccl-tests sizes 1 MiB .. 8 GiB, doubling.
AllreduceCurve curve(std::vector<double> busbw, std::string source) {
  AllreduceCurve out;
  double bytes = 1 << 20;
  for (double value : busbw) {
    out.points.push_back({bytes, value});
    bytes *= 2;
  }
  out.gpus = 8;
  out.source = std::move(source);
  out.measured = true;
  return out;
}

AllreduceCurve link_bound(double gbps, std::string source) {
  AllreduceCurve out;
  out.points.push_back({0, gbps});
  out.source = std::move(source);
  return out;
}

// Functions, not globals: the table may be built while other files' static registrars run (a probe's
// help text names the GPUs), before this file's globals would be constructed.
std::string mamf() {
  return "ml-engineering MAMF table, v1 (stas00/ml-engineering b9e2972, compute/accelerator/README.md, read 2026-12)";
}
std::string azure_h100() {
  return "Azure ND H100 v5 (samuel-bohman/AI-benchmarking-guide a6533f1, Azure_Results/ND_H100_v5_results.md; CUDA 12.6, "
    "NCCL 2.18.5; read 2026-12)";
}
std::string azure_h200() {
  return "Azure ND H200 v5 (samuel-bohman/AI-benchmarking-guide 0de7d01, Azure_Results/ND_H200_v5_results.md; CUDA 12.6, "
    "NCCL 2.20.5; read 2026-12)";
}
std::string azure_a100() {
  return "Azure ND A100 v4 (samuel-bohman/AI-benchmarking-guide 26d18e9, Azure_Results/ND_A100_v4_results.md; CUDA 12.5, "
    "NCCL 2.18.5; read 2026-12)";
}

GpuModel h100() {
  const std::string ds = "NVIDIA H100 datasheet, H100 SXM (dense, nvidia.com, read 2026-12)";
  GpuModel m;
  m.name = "h100";
  m.aliases = {"h100-sxm"};
  m.description = "H100 SXM5 80 GB (HGX, NVLink 4)";
  m.device_names = {"NVIDIA H100 80GB HBM3"};
  m.peak_tflops = peaks(ds, 67, 67, 494.7, 989.4, 989.4, 1978.9);
  m.gemm_tflops = {
      {"bf16", measured(792.1, mamf() + ": H100 SXM bf16 matmul 6144x17920x2816, CUDA 12.1")},
      {"fp16", derived(792.1, mamf() + ": the H100 SXM bf16 figure (fp16 runs on the same tensor cores at the same "
                                     "datasheet rate)")},
      {"fp8", measured(1382.2, azure_h100() + ": cuBLASLt fp8 GEMM 32768^3, best of the published shapes")},
  };
  m.memory_bytes = driver_total(81559, "datasheet: 80 GB HBM3");
  m.hbm_peak_gbps = peak(3350, ds + ": 3.35 TB/s");
  m.hbm_gbps = measured(2900, azure_h100() + ": HBM copy 2.90 TB/s");
  m.h2d_gbps = measured(51, azure_h100() + ": nvbandwidth host to device 51 GB/s (PCIe Gen5 x16)");
  m.allreduce = curve({43.70, 81.93, 128.73, 172.13, 234.45, 295.53, 361.78, 400.61, 423.38, 438.46, 466.35, 472.36,
                       475.54, 478.87},
                      azure_h100() + ": nccl-tests AllReduce busbw, 8 GPUs, NVLS");
  return m;
}

GpuModel h200() {
  const std::string ds = "NVIDIA H200 datasheet, H200 SXM (dense, nvidia.com, read 2026-12)";
  GpuModel m;
  m.name = "h200";
  m.aliases = {"h200-sxm"};
  m.description = "H200 SXM 141 GB (HGX, NVLink 4)";
  m.device_names = {"NVIDIA H200"};
  m.peak_tflops = peaks(ds, 67, 67, 494.7, 989.4, 989.4, 1978.9);
  const std::string same_die =
      ": the H100 SXM bf16 figure, 6144x17920x2816, CUDA 12.1 (the table has no H200 row; H200 has the same GH100 "
      "compute die, clocks and 989 TFLOP/s peak, and its published fp8 GEMM is within 1.2% of H100's)";
  m.gemm_tflops = {
      {"bf16", derived(792.1, mamf() + same_die)},
      {"fp16", derived(792.1, mamf() + same_die)},
      {"fp8", measured(1366.3, azure_h200() + ": cuBLASLt fp8 GEMM 16384^3, best of the published shapes")},
  };
  m.memory_bytes = driver_total(143771, "datasheet: 141 GB HBM3e");
  m.hbm_peak_gbps = peak(4800, ds + ": 4.8 TB/s");
  m.hbm_gbps = measured(4010, azure_h200() + ": HBM copy 4.01 TB/s");
  m.h2d_gbps = measured(52, azure_h200() + ": nvbandwidth host to device 52 GB/s (PCIe Gen5 x16)");
  m.allreduce = curve({52.96, 88.78, 138.44, 181.94, 240.41, 300.91, 368.11, 412.45, 432.24, 442.72, 467.58, 472.57,
                       477.41, 479.98},
                      azure_h200() + ": nccl-tests AllReduce busbw, 8 GPUs, NVLS");
  return m;
}

GpuModel a100_80gb() {
  const std::string ds = "NVIDIA A100 datasheet, A100 80GB SXM (dense, nvidia.com, read 2026-12)";
  GpuModel m;
  m.name = "a100-80gb";
  m.aliases = {"a100", "a100-sxm"};
  m.description = "A100 SXM4 80 GB (HGX, NVLink 3)";
  m.device_names = {"NVIDIA A100-SXM4-80GB"};
  m.peak_tflops = peaks(ds, 19.5, 19.5, 156, 312, 312, std::nullopt);
  m.gemm_tflops = {
      {"bf16", measured(267.9, mamf() + ": A100 SXM bf16 matmul 6912x16384x2048, CUDA 12.1")},
      {"fp16", measured(256.5, azure_a100() + ": cuBLASLt fp16 GEMM 16384^3")},
  };
  m.memory_bytes = driver_total(81920, "datasheet: 80 GB HBM2e");
  m.hbm_peak_gbps = peak(2039, ds + ": 2,039 GB/s");
  m.hbm_gbps = measured(1610, azure_a100() + ": HBM copy 1.61 TB/s");
  m.h2d_gbps = measured(26.28, azure_a100() + ": nvbandwidth host to device 26.28 GB/s (PCIe Gen4 x16)");
  m.allreduce = curve({36.22, 53.54, 71.43, 89.99, 109.22, 132.77, 166.63, 174.18, 213.87, 221.58, 228.10, 230.22,
                       230.48, 231.58},
                      azure_a100() + ": nccl-tests AllReduce busbw, 8 GPUs");
  return m;
}

GpuModel l40s() {
  const std::string ds = "NVIDIA L40S datasheet (dense, nvidia.com, read 2026-12)";
  GpuModel m;
  m.name = "l40s";
  m.description = "L40S 48 GB (PCIe Gen4, no NVLink)";
  m.device_names = {"NVIDIA L40S"};
  m.peak_tflops = peaks(ds, std::nullopt, 91.6, 183, 362.05, 362.05, 733);
  m.memory_bytes = driver_total(46068, "datasheet: 48 GB GDDR6, ECC on");
  m.max_per_node = 10;  // PCIe servers hold up to 10
  m.hbm_peak_gbps = peak(864, ds + ": 864 GB/s");
  m.h2d_gbps = peak(32, "PCIe 4.0 specification: x16 link rate 32 GB/s per direction (no published measurement in the table)");
  m.allreduce = link_bound(32, "PCIe 4.0 specification: x16 link rate 32 GB/s per direction, an upper bound for "
                               "all-reduce busbw without NVLink (no published measurement in the table)");
  return m;
}

// Models the table knows by device name for percent of peak, without the measured references a
// --target-gpus node needs (their stages are then not judged, naming the missing figure).
GpuModel peaks_only(std::string name, std::string description, std::string device, const std::string& datasheet,
                    std::optional<double> fp64, double fp32, double tf32, double fp16, double bf16,
                    std::optional<double> fp8, double memory_gb, double hbm_gbps) {
  GpuModel m;
  m.name = std::move(name);
  m.description = std::move(description);
  m.device_names = {std::move(device)};
  m.peak_tflops = peaks(datasheet, fp64, fp32, tf32, fp16, bf16, fp8);
  m.memory_bytes = peak(memory_gb * 1e9, datasheet);
  m.hbm_peak_gbps = peak(hbm_gbps, datasheet);
  return m;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

AllreducePoint AllreduceCurve::nearest(double bytes) const {
  AllreducePoint best;
  double best_distance = 0;
  for (const AllreducePoint& point : points) {
    const double distance = point.bytes > 0 && bytes > 0 ? std::fabs(std::log(point.bytes / bytes)) : 0;
    if (best.busbw_gbps == 0 || distance < best_distance) {
      best = point;
      best_distance = distance;
    }
  }
  return best;
}

std::optional<SourcedValue> GpuModel::gemm_rate(const std::string& dtype) const {
  if (auto it = gemm_tflops.find(dtype); it != gemm_tflops.end()) return it->second;
  const auto it = peak_tflops.find(dtype);
  if (it == peak_tflops.end()) return std::nullopt;
  const PeakMargin margin = gemm_peak_margin(dtype);
  SourcedValue scaled = it->second;
  scaled.value = it->second.value * margin.mean_ratio;
  scaled.from_peak = true;
  scaled.source = fmt::format("{}: {:.5g} TFLOP/s peak x {:.2f}, the mean published GEMM/peak ratio of {} (from {:.2f} "
                              "to {:.2f}); no published GEMM measurement of this model in the table",
                              it->second.source, it->second.value, margin.mean_ratio, margin.models, margin.min_ratio,
                              margin.max_ratio);
  return scaled;
}

PeakMargin gemm_peak_margin(const std::string& dtype) {
  struct Pair {
    std::string what;
    double ratio;
  };
  std::vector<Pair> same_dtype, any_dtype;
  for (const GpuModel& model : gpu_table())
    for (const auto& [rate_dtype, rate] : model.gemm_tflops) {
      const auto peak_it = model.peak_tflops.find(rate_dtype);
      if (!rate.measured || rate.derived || peak_it == model.peak_tflops.end() || peak_it->second.value <= 0) continue;
      const Pair pair{fmt::format("{} {} {:.2f}", model.name, rate_dtype, rate.value / peak_it->second.value),
                      rate.value / peak_it->second.value};
      any_dtype.push_back(pair);
      if (rate_dtype == dtype) same_dtype.push_back(pair);
    }
  const std::vector<Pair>& pairs = same_dtype.empty() ? any_dtype : same_dtype;
  PeakMargin margin;
  if (pairs.empty()) return margin;
  double sum = 0;
  margin.min_ratio = margin.max_ratio = pairs.front().ratio;
  for (const Pair& pair : pairs) {
    sum += pair.ratio;
    margin.min_ratio = std::min(margin.min_ratio, pair.ratio);
    margin.max_ratio = std::max(margin.max_ratio, pair.ratio);
    margin.models += (margin.models.empty() ? "" : ", ") + pair.what;
  }
  margin.mean_ratio = sum / static_cast<double>(pairs.size());
  return margin;
}

std::optional<SourcedValue> GpuModel::memory_bandwidth() const { return hbm_gbps ? hbm_gbps : hbm_peak_gbps; }

const std::vector<GpuModel>& gpu_table() {
  static const std::vector<GpuModel> table{
      h100(),
      h200(),
      a100_80gb(),
      l40s(),
      peaks_only("h100-pcie", "H100 PCIe 80 GB", "NVIDIA H100 PCIe", "NVIDIA H100 datasheet, H100 PCIe (dense, nvidia.com, read 2026-12)", 51,
                 51, 378, 756, 756, 1513, 80, 2000),
      peaks_only("a100-40gb", "A100 SXM4 40 GB", "NVIDIA A100-SXM4-40GB", "NVIDIA A100 datasheet, A100 40GB SXM (dense, nvidia.com, read 2026-12)",
                 19.5, 19.5, 156, 312, 312, std::nullopt, 40, 1555),
      peaks_only("a100-80gb-pcie", "A100 PCIe 80 GB", "NVIDIA A100 80GB PCIe",
                 "NVIDIA A100 datasheet, A100 80GB PCIe (dense, nvidia.com, read 2026-12)", 19.5, 19.5, 156, 312, 312, std::nullopt, 80, 1935),
  };
  return table;
}

const GpuModel* find_gpu_model(const std::string& name) {
  const std::string wanted = lower(name);
  for (const GpuModel& model : gpu_table()) {
    if (model.name == wanted) return &model;
    for (const std::string& alias : model.aliases)
      if (alias == wanted) return &model;
  }
  return nullptr;
}

const GpuModel* find_gpu_model_by_device(const std::string& device_name) {
  for (const GpuModel& model : gpu_table())
    for (const std::string& device : model.device_names)
      if (device == device_name) return &model;
  return nullptr;
}

std::string known_gpu_models() {
  std::string names;
  for (const GpuModel& model : gpu_table()) {
    names += (names.empty() ? "" : ", ") + model.name;
    if (!model.aliases.empty()) {
      std::string aliases;
      for (const std::string& alias : model.aliases) aliases += (aliases.empty() ? "" : ", ") + alias;
      names += " (" + aliases + ")";
    }
  }
  return names;
}

}  // namespace nodeaudit::score
