// Shared by `learn` (learn_session.cpp) and `learn --vary` (learn_vary_session.cpp): the request's
// checked form, and one run of the user's job with the module injected.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/learn/job_runner.hpp"
#include "harness/learn/learn_session.hpp"
#include "harness/learn/learned_job.hpp"
#include "harness/learn/vary.hpp"
#include "harness/session/result_file.hpp"
#include "harness/session/run_options.hpp"

namespace nodeaudit::learn {

inline constexpr int learn_counted_steps = 1;  // the FLOP counter's step, after the measured ones

struct ValidLearn {
  int steps = 0, warmup = 0;
  double timeout_s = 0;
  std::string timeout_text;
  double grace_s = 10;     // --grace: for the job to end by itself after its last step, and after SIGINT
  session::OutPath out;
  std::string claimed_out;  // the result file claimed for this learn (the guardian removes it while it holds nothing measured)
  std::string profile_path, md_path, name, command_text;
  std::optional<VarySetting> vary;
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
  JobRun run;
  LearnedJob job;
};

// `--vary cpus`: the CPUs the job needs, measured, and the prediction for each value beside it
// (learn_vary_cpus.cpp).
std::string cpus_answer(const VaryReport& report, const std::map<std::string, OneRun>& complete_run, const ValidLearn& v,
                        const nlohmann::json& doc);

// Runs the job once with `extra_env` on top of learn's own variables. Throws UsageError for a job
// that cannot start or fails before its first step (bad input), as `learn` reports it.
OneRun run_learn_once(const LearnRequest& o, const ValidLearn& v, const std::map<std::string, std::string>& extra_env);
// Why a run is not complete (status, reason); status "ok" when it is.
std::pair<std::string, std::string> learn_outcome(const JobRun& run, const LearnedJob& job, const ValidLearn& v);

// The job's own value of the varied setting, found before any measured run (learn_vary_probe.cpp).
// Throws UsageError for a job that makes no DataLoader when the setting needs one.
struct VaryProbe {
  std::optional<std::string> own_value;
  double wall_s = 0;
  bool interrupted = false;
};
VaryProbe probe_own_setting(const LearnRequest& o, const ValidLearn& v);

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
void validate_vary_options(const LearnRequest& o, ValidLearn& v);

// `learn --audit` (learn_audit.cpp): this node's GEMM, host-to-device, storage (of the profile's
// access pattern) and CPU decode probes for the learned profile, run by the session engine; their
// result entries.
// `job_python`: the interpreter the job's ranks ran (empty when unknown): host.dataloader runs in it.
nlohmann::json audit_node_for_profile(const std::string& profile_path, const std::string& data_dir, const std::string& job_python,
                                      const std::atomic<bool>& interrupt);

// The request checked before anything runs (learn_validate.cpp). Throws UsageError.
ValidLearn validate_learn(const LearnRequest& o);
// Throws UsageError when `path` exists (nodeaudit never overwrites a file) or its directory does not.
void refuse_existing(const std::string& option, const std::string& path);

// `learn --vary` from the claimed result file on; returns the exit code.
int learn_vary_session(const LearnRequest& o, const ValidLearn& v, const session::ResultFile& result, nlohmann::json doc);

}  // namespace nodeaudit::learn
