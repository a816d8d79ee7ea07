// A workload profile: what one training (or batch-inference) step of a workload demands from a node.
// Loaded from TOML (profiles/*.toml, every field documented in profiles/README.md); sizes are bytes,
// durations seconds, fractions 0..1. Derived figures (FLOPs per sample, state bytes) are computed here
// once so the scorer and the `profiles show` command agree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/score/expect_settings.hpp"

namespace nodeaudit::score {

enum class Category { compute_intensive, memory_intensive, data_throughput_intensive, latency_sensitive };
// memmap: windows of one file read through a memory mapping (np.memmap), whose page faults and
// read-around, not the sample size, decide what the device reads.
enum class AccessPattern { sequential_shards, small_files, random, memmap };
enum class DecodeKind { none, jpeg };
// Who feeds the GPUs decoded samples: a framework's DataLoader in Python worker processes (the
// default: what training scripts run), or a native pipeline (C++ or GPU decode, DALI).
enum class LoaderKind { pytorch, native };
enum class Sharding { none, full };  // none: a full replica per GPU (DDP); full: FSDP / ZeRO-3 across the node

std::string to_string(Category category);
std::string to_string(AccessPattern access);
std::string to_string(DecodeKind decode);
std::string to_string(LoaderKind loader);
std::string to_string(Sharding sharding);

struct ModelSpec {
  double parameters = 0;
  double trainable_parameters = 0;  // = parameters unless given (LoRA: the adapter weights only)
  std::string dtype = "bf16";       // the GEMM dtype: fp64, fp32, tf32, fp16, bf16, fp8
  std::optional<double> flops_per_sample;
  std::optional<double> tokens_per_sample;
  double flops_per_token_per_parameter = 6;    // 6·N rule for training; 4 with frozen weights; 2 forward only
  std::string optimizer = "adamw";             // adamw, sgd, none
  double bytes_per_parameter = 16;             // per trainable parameter: weights + gradients + optimizer state
  double gradient_bytes_per_parameter = 2;     // what the all-reduce moves per trainable parameter (default: dtype)
  double activation_bytes_per_sample = 0;      // peak activations (or KV cache) per sample in a micro-batch
  double memory_traffic_bytes_per_sample = 0;  // GPU-memory bytes per sample not hidden behind GEMMs (0: ignore)
};

struct SizeShare {
  double bytes = 0;
  double share = 0;
};

struct DataSpec {
  double sample_bytes = 0;  // mean stored size of one sample (from sample_size or the distribution)
  std::vector<SizeShare> sample_size_distribution;
  double dataset_bytes = 0;
  AccessPattern access = AccessPattern::sequential_shards;
  DecodeKind decode = DecodeKind::none;
  LoaderKind loader = LoaderKind::pytorch;
  double device_bytes_per_sample = 0;  // bytes copied host -> GPU per sample (decoded tensor)
};

struct TrainingSpec {
  int micro_batch_per_gpu = 1;
  int gradient_accumulation = 1;
  double model_efficiency = 0.4;  // achieved FLOP rate as a fraction of the measured GEMM rate
  double comm_overlap = 0;        // share of gradient communication hidden behind compute
  Sharding sharding = Sharding::none;
  double checkpoint_bytes = 0;
  double checkpoint_interval_s = 0;
  std::optional<double> target_samples;
  std::optional<double> target_tokens;
};

// The seed rules of the balance model (shared/ARCHITECTURE.md); a profile may override each.
struct Thresholds {
  double utilization_healthy = 0.70;        // PASS at or above
  double utilization_min = 0.50;            // FAIL below (not compute-bound)
  double memory_peak_max = 0.80;            // peak / usable GPU memory; FAIL above 1
  double comm_share_max = 0.20;             // exposed communication / step; FAIL above twice
  double data_wait_max = 0.30;              // data wait / step; FAIL above twice
  double host_ram_to_gpu_memory_min = 2.0;  // host RAM / total GPU memory; FAIL below half
  double cpu_cores_per_gpu_min = 4;         // FAIL below half
  double gpu_spread_max = 0.10;             // (max - min) / max across GPUs; FAIL above twice
  double upgrade_utilization_min = 0.85;
  double upgrade_memory_min = 0.75;       // peak / usable at or above: memory is near its limit
  double upgrade_wait_max = 0.05;         // data wait and exposed communication each at or below
  std::optional<double> step_time_max_s;  // latency-sensitive workloads: predicted step time limit
};

struct Profile {
  std::string name;
  std::string description;
  std::string source_path;
  Category category = Category::compute_intensive;
  ModelSpec model;
  DataSpec data;
  TrainingSpec training;
  Thresholds thresholds;
  ExpectSettings expect;  // [expect]: the expected-value grading's limits and values (expect_settings.hpp)

  double flops_per_sample() const;  // given, else tokens x factor x parameters
  int samples_per_step_per_gpu() const { return training.micro_batch_per_gpu * training.gradient_accumulation; }
  // The compute time formula, written once for the scorer's compute stage, run's --target-gpus FILE
  // and pipeline.step's emulated compute: `tflop` of one step on one GPU over the GEMM rate the
  // profile's model reaches (model_efficiency of `gemm_tflops`).
  double compute_time_s(double tflop, double gemm_tflops) const { return tflop / (gemm_tflops * training.model_efficiency); }
  double dtype_bytes() const;
  double model_state_bytes() const;  // frozen weights + trainable state, whole model
  double gradient_bytes() const;     // what one gradient all-reduce moves
  std::optional<double> target_run_samples() const;
};

double bytes_per_element(const std::string& dtype);  // 0 for an unknown dtype

// Parses and validates a profile document; `path` is used in error messages. Throws UsageError
// "<path>:<line>:<column>: <why>".
Profile parse_profile(const std::string& toml_text, const std::string& path);
Profile load_profile_file(const std::string& path);

}  // namespace nodeaudit::score
