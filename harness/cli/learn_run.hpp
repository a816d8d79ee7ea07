// Shared by `learn` (cmd_learn.cpp) and `learn --vary` (cmd_learn_vary.cpp): the options, their
// checked form, and one run of the user's job with the module injected.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/cli/common_options.hpp"
#include "harness/learn/job_runner.hpp"
#include "harness/learn/learned_job.hpp"
#include "harness/learn/vary.hpp"

namespace nodeaudit::cli {

inline constexpr int learn_counted_steps = 1;  // the FLOP counter's step, after the measured ones

struct LearnOptions {
  std::string steps = "20", warmup = "5", timeout = "10m", grace = "10s";
  std::string out, out_profile, md, name;
  std::string vary, repeats = "3";
  std::string html, price_per_hour, target_gpus;  // with --vary
  std::string data_dir_copy;
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
  double grace_s = 10;     // --grace: for the job to end by itself after its last step, and after SIGINT
  session::OutPath out;
  std::string claimed_out;  // the result file claimed for this learn (the guardian removes it while it holds nothing measured)
  std::string profile_path, md_path, name, command_text;
  std::optional<learn::VarySetting> vary;
  nlohmann::json node_result;                  // --result's document (null without it)
  std::map<std::string, double> gemm_tflops;  // from --result
  int repeats = 3;
  std::string html_path;
  std::optional<double> price_per_hour;
  std::string target_gpus;  // checked: score::parse_target_gpus accepts it
  std::string data_dir_copy;
};

// How the job is ended when learn ends it: SIGINT, --grace for it to end, SIGTERM, 5 s, SIGKILL.
inline constexpr double learn_sigterm_wait_s = 5;
inline TreeEndWaits job_end_waits(const ValidLearn& v) { return {v.grace_s, learn_sigterm_wait_s}; }

struct OneRun {
  learn::JobRun run;
  learn::LearnedJob job;
};

// `--vary cpus`: the CPUs the job needs, measured, and the prediction for each value beside it
// (learn_vary_cpus.cpp).
std::string cpus_answer(const learn::VaryReport& report, const std::map<std::string, OneRun>& complete_run, const ValidLearn& v,
                        const nlohmann::json& doc);

// Runs the job once with `extra_env` on top of learn's own variables. Throws UsageError for a job
// that cannot start or fails before its first step (bad input), as `learn` reports it.
OneRun run_learn_once(const LearnOptions& o, const ValidLearn& v, const std::map<std::string, std::string>& extra_env);
// Why a run is not complete (status, reason); status "ok" when it is.
std::pair<std::string, std::string> learn_outcome(const learn::JobRun& run, const learn::LearnedJob& job, const ValidLearn& v);

// The job's own value of the varied setting, found before any measured run (learn_vary_probe.cpp).
// Throws UsageError for a job that makes no DataLoader when the setting needs one.
struct VaryProbe {
  std::optional<std::string> own_value;
  double wall_s = 0;
  bool interrupted = false;
};
VaryProbe probe_own_setting(const LearnOptions& o, const ValidLearn& v);

// --data-dir-copy DIR (learn_data_copy.cpp): the one directory the command names, copied under DIR
// by make(); the destructor removes exactly what make() created. Throws UsageError.
class DataDirCopy {
 public:
  DataDirCopy(const std::vector<std::string>& command, const std::string& dir);
  ~DataDirCopy();
  DataDirCopy(const DataDirCopy&) = delete;
  DataDirCopy& operator=(const DataDirCopy&) = delete;
  void make();
  std::vector<std::string> command_at(const std::string& place) const;
  const std::string& original() const { return original_; }
  const std::string& copy() const { return copy_; }
  double bytes() const { return bytes_; }

 private:
  std::vector<std::string> command_;
  std::size_t word_ = 0;
  std::string original_, copy_;
  std::string dir_, owned_name_, owned_;  // DIR, the owned folder's name, the folder once made
  double bytes_ = 0;
  std::vector<std::string> created_;
};

// The optimize-or-upgrade line for a complete run (on a node without a GPU, its learned profile
// `profile_toml` assessed for --target-gpus when given).
std::string optimize_or_upgrade_line(const OneRun& one, const ValidLearn& v, const nlohmann::json& doc, const std::string& profile_toml);

// --html, --price-per-hour and --target-gpus: checked here, accepted only with --vary (--target-gpus with plain learn too).
void validate_vary_options(const LearnOptions& o, ValidLearn& v);

// `learn --audit`: this node's GEMM, host-to-device, storage (of the profile's access pattern) and
// CPU decode probes for the learned profile, run by the run engine; their result entries.
// `job_python`: the interpreter the job's ranks ran (empty when unknown): host.dataloader runs in it.
nlohmann::json audit_node_for_profile(const std::string& profile_path, const std::string& data_dir, const std::string& job_python,
                                      const std::atomic<bool>& interrupt);

// Throws UsageError when `path` exists (nodeaudit never overwrites a file) or its directory does not.
void refuse_existing(const std::string& option, const std::string& path);
// The words as one shell command line that reads back as the same words.
std::string shell_quoted(const std::vector<std::string>& words);

int execute_learn_vary(const LearnOptions& o, const ValidLearn& v, const std::string& out_path, nlohmann::json doc);

}  // namespace nodeaudit::cli
