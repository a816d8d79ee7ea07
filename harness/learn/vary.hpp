// `learn --vary SETTING=V1,V2,..`: the one setting changed per run (a DataLoader constructor
// argument, overridden by the injected module for every DataLoader the job makes, or an environment
// variable), the runs' figures gathered per value, and the verdict of each value against the first
// (list the job's own setting first): `better` / `worse` when the medians differ by more than the
// larger of the two values' spreads (max - min over the repeats), else `no difference beyond the
// spread`; `not judged` with one repeat (no spread to judge against) or when runs failed.
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
  bool needs_dataloader() const { return env_name.empty(); }
};

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
  std::optional<double> cpu_cores;
};

struct VaryValue {
  std::string value;
  std::vector<double> step_time_s, samples_per_s, data_wait_share, cpu_cores;  // one per successful repeat
  std::vector<std::string> failures;
  double figure_median = 0, figure_min = 0, figure_max = 0;  // step time, or samples/s for batch_size
  std::string verdict;   // against the first value; "baseline" for the first
  double gain = 0;       // fraction: step time saved, or samples/s gained, over the first value
};

struct VaryReport {
  VarySetting setting;
  int repeats = 0;
  std::vector<VaryValue> values;
  std::optional<std::string> best;  // the value with the best median, when every value has a run
};

VaryReport summarize_vary(const VarySetting& setting, int repeats, const std::vector<VaryRun>& runs);
std::string render_vary(const VaryReport& report, const std::string& command_text);
std::string render_vary_markdown(const VaryReport& report, const std::string& command_text);
nlohmann::json vary_probe_entry(const VaryReport& report, const std::vector<VaryRun>& runs, const std::vector<std::string>& command,
                                double wall_s);

}  // namespace nodeaudit::learn
