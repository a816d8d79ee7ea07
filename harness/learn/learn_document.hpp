// A learn run as a result document (results/SCHEMA.md, section "learn"): one probes[] entry with id
// `learn.job`: the measured steps as metrics (step time, samples/s, data-wait share, the job's CPU
// and storage reads), and in `info` the per-step timeline, the learned profile fields each with
// how it was obtained, the communication figures, and how the job ended.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/learn/job_runner.hpp"
#include "harness/learn/learned_job.hpp"

namespace nodeaudit::learn {

inline constexpr const char* learn_probe_id = "learn.job";

struct LearnRunInfo {
  std::vector<std::string> command;
  double timeout_s = 0;
  std::string status = "ok";  // ok, failed, timeout, interrupted
  std::string reason;
  std::string profile_path;   // empty when none was written
  nlohmann::json data_wait_check;  // measured beside predicted (`--result`); null when not checked
  // What the job measured about itself (score::JobMeasured) and the learned profile's text: with
  // them `nodeaudit predict` carries the job to another node. Null / empty for an incomplete run.
  nlohmann::json job_measured;
  std::string profile_toml;
};

nlohmann::json learn_probe_entry(const LearnedJob& job, const JobRun& run, const LearnRunInfo& info);

// CPU (cores busy) and storage reads of the job's processes between the first and last measured step
// (the whole job when the measured steps were not reached).
struct GpuLoad {
  int index = 0;
  bool job_context_known = false;  // the job's processes were found on this GPU (else: every GPU kept)
  std::vector<double> util_pct, mem_used_bytes;
};
struct JobLoad {
  std::vector<double> cpu_cores, read_bytes_per_s, resident_bytes;
  std::string window;  // "measured steps" or "whole job"
  // NVML over the same window: the GPUs the job's processes ran on (every GPU when they were not
  // found among the processes NVML lists). gpu_not_measured says why there are none.
  std::vector<GpuLoad> gpus;
  std::string gpu_not_measured;
  std::vector<double> peak_allocated_bytes;  // per rank that used CUDA: torch.cuda.max_memory_allocated
};
JobLoad job_load(const JobRun& run);

}  // namespace nodeaudit::learn
