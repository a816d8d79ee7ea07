// Shared by `learn` (cmd_learn.cpp) and `learn --vary` (cmd_learn_vary.cpp): the options, their
// checked form, and one run of the user's job with the module injected.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../learn/job_runner.hpp"
#include "../learn/learned_job.hpp"
#include "../learn/vary.hpp"
#include "common.hpp"

namespace nodeaudit::cli {

inline constexpr int learn_counted_steps = 1;  // the FLOP counter's step, after the measured ones

struct LearnOptions {
  std::string steps = "20", warmup = "5", timeout = "10m";
  std::string out, out_profile, md, name;
  std::string vary, repeats = "2";
  std::string result;  // a nodeaudit result of this node holding gpu.gemm
  bool audit = false;  // --audit: run this node's probes for the learned profile after the job
  std::string data_dir;  // --data-dir, with --audit: a directory on the storage under test
  std::vector<std::string> command;
  std::vector<std::string> argv;
};

struct ValidLearn {
  int steps = 0, warmup = 0;
  double timeout_s = 0;
  std::string timeout_text;
  OutPath out;
  std::string profile_path, md_path, name, command_text;
  std::optional<learn::VarySetting> vary;
  nlohmann::json node_result;                  // --result's document (null without it)
  std::map<std::string, double> gemm_tflops;  // from --result
  int repeats = 2;
};

struct OneRun {
  learn::JobRun run;
  learn::LearnedJob job;
};

// Runs the job once with `extra_env` on top of learn's own variables. Throws UsageError for a job
// that cannot start or fails before its first step (bad input), as `learn` reports it.
OneRun run_learn_once(const LearnOptions& o, const ValidLearn& v, const std::map<std::string, std::string>& extra_env);
// Why a run is not complete (status, reason); status "ok" when it is.
std::pair<std::string, std::string> learn_outcome(const learn::JobRun& run, const learn::LearnedJob& job, const ValidLearn& v);

// `learn --audit`: this node's GEMM, host-to-device, storage (of the profile's access pattern) and
// CPU decode probes for the learned profile, run by the run engine; their result entries.
nlohmann::json audit_node_for_profile(const std::string& profile_path, const std::string& data_dir, const std::atomic<bool>& interrupt);

int execute_learn_vary(const LearnOptions& o, const ValidLearn& v, const std::string& out_path, nlohmann::json doc);

}  // namespace nodeaudit::cli
