// `learn --vary SETTING=V1,V2,..`: the one setting changed per run (a DataLoader constructor
// argument, overridden by the injected module for every DataLoader the job makes, or an environment
// variable), the runs' figures gathered per value, and the verdict of each value against the
// baseline (the job's own setting when it is among the values, else the first value), by the rule
// of harness/core/change_test.hpp on the repeats' figures (step time, or samples/s for batch_size):
// `better` / `worse` when the 99% t-interval of the difference of the means leaves zero, else `no
// difference`; each verdict carries the statistic. `not judged` when runs failed. The runs go in a
// random interleaved order after one discarded warm-up run (learn_vary_session.cpp), and at least two
// repeats are needed (one gives no scatter to judge against).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeaudit::learn {

struct VarySetting {
  std::string name;  // "num_workers", ..., or "env:NAME"
  std::string env_name;  // NAME for env:NAME, else empty
  std::vector<std::string> values;
  bool per_sample_rate() const { return name == "batch_size"; }  // step time changes with the batch: compare samples/s
  bool data_dir() const { return name == "data_dir"; }  // --data-dir-copy: the values are the data directory's places
  bool cpus() const { return name == "cpus"; }          // the CPUs the job's process tree may use (cpu_confinement.hpp)
  bool needs_dataloader() const { return env_name.empty() && !data_dir() && !cpus(); }
};

// --data-dir-copy: the job run from its own data directory and from the copy.
VarySetting data_dir_setting(const std::string& original, const std::string& copy);

// Parses and checks "SETTING=V1,V2,..". Throws UsageError naming the bad part and what is accepted.
VarySetting parse_vary(const std::string& text);

// The environment one run gets for `value`: NODEAUDIT_LEARN_OVERRIDES for a DataLoader setting (JSON
// the module reads), or NAME=value.
std::map<std::string, std::string> vary_environment(const VarySetting& setting, const std::string& value);

struct VaryRun {
  std::string value;
  int repeat = 0;
  bool ok = false;
  std::string failure;  // why not, with the exit code and last lines
  double step_time_s = 0, samples_per_s = 0, data_wait_share = 0;
  double samples_per_step = 0;           // per rank: the batch the job's DataLoader gave
  std::optional<double> cpu_cores;       // median over the measured steps, all of the job's processes
  std::optional<double> gpu_peak_bytes;  // the largest rank's peak allocated GPU memory, on a GPU node
  std::optional<double> gpu_util_pct;    // NVML utilization over the measured steps: each GPU's median, averaged over the job's GPUs
  double target_samples = 0;             // the learned profile's target_samples (0 when not learned)
  std::string target_samples_how;        // how it was learned (an assumption, said on the cost line)
  std::string command;                   // the exact command that reproduces this run
};

struct Spread {
  double median = 0, min = 0, max = 0;
  std::size_t count = 0;
};
Spread spread_of(const std::vector<double>& values);

struct VaryValue {
  std::string value;
  std::vector<double> step_time_s, samples_per_s, data_wait_share, cpu_cores, gpu_peak_bytes, gpu_util_pct;  // one per successful repeat
  std::vector<std::string> failures;
  double figure_median = 0, figure_min = 0, figure_max = 0;  // step time, or samples/s for batch_size
  std::string verdict;   // against the baseline; "baseline" for it
  std::string statistic; // how the verdict was reached (ChangeTest::statistic)
  double gain = 0;       // fraction: step time saved, or samples/s gained, over the baseline (means)
  std::string command;   // the command that reproduces one run of this value
  double target_samples = 0;
  std::string target_samples_how;
};

struct VaryReport {
  VarySetting setting;
  int repeats = 0;
  std::string baseline;                 // the value the others are judged against
  std::optional<std::string> own_value; // the job's own setting, from the probe run (or the environment)
  double probe_s = 0;                   // what finding it cost (wall seconds of the probe run; 0 for env:NAME)
  std::vector<VaryValue> values;
  std::optional<std::string> best;  // the value with the best median, when every value has a run
  // Solidify: the best value's learned profile, and the cost of one run before and after.
  std::string best_profile_path;
  std::optional<double> price_per_hour;
  std::string advice;  // the optimize-or-upgrade line, with its figures
};

const VaryValue* find_value(const VaryReport& report, const std::string& value);

VaryReport summarize_vary(const VarySetting& setting, int repeats, const std::vector<VaryRun>& runs, const std::string& baseline);
// The hours and cost of one run to the target samples at `value`'s median samples/s (nullopt
// without a price, a rate or a target).
std::optional<double> run_hours(const VaryValue& v);
std::optional<double> run_cost(const VaryReport& report, const VaryValue& v);

std::string render_vary(const VaryReport& report, const std::string& command_text);
std::string render_vary_markdown(const VaryReport& report, const std::string& command_text);
std::string render_vary_html(const VaryReport& report, const std::string& command_text);
std::string vary_step_chart_svg(const VaryReport& report);
nlohmann::json vary_probe_entry(const VaryReport& report, const std::vector<VaryRun>& runs, const std::vector<std::string>& command,
                                double wall_s);
// The report back from a result's learn.vary entry (its info block), for rendering a recorded result.
VaryReport vary_report_from_entry(const nlohmann::json& entry);

}  // namespace nodeaudit::learn
