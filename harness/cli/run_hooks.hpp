// What `run` does beyond measuring: the profile it plans and scores for, the assessment at the
// end, and side outputs (Prometheus textfile). Kept apart so cmd_run.cpp stays about running.
#pragma once

#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "../context.hpp"
#include "../probe.hpp"
#include "../score/score.hpp"

namespace nodeaudit::cli {

struct RunExtras {
  std::string price_per_hour;  // --price-per-hour, text as typed
  std::string prometheus;      // --prometheus FILE
  std::string expect;          // --expect FILE
  std::optional<score::Profile> profile;
  score::CostOptions cost;
  std::string target_gpus;  // --target-gpus SPEC, as typed
  std::optional<score::TargetGpus> target;
  std::string python;  // --python PATH: the interpreter of every probe that runs Python
};

void add_run_extras(CLI::App& run, RunExtras& extras);
// Loads and checks the profile and the side-output paths before any probe runs, so bad input
// costs no measuring time. Returns the resolved profile file path ("" when no profile).
std::string prepare_run_extras(const std::string& profile_name_or_path, RunExtras& extras);
// Parameter texts a profile implies for a probe (the sample size of the data set, ...).
std::map<std::string, std::string> probe_params_for(const ProbeSpec& spec, const RunExtras& extras);
// Why the profile leaves `spec` out of the run, or std::nullopt to run it. Only a probe whose
// figure the profile's assessment never reads is left out (host.decode for a profile that decodes
// nothing on the CPU), and only when the user did not name probes with --only: the time goes to
// the figures the verdict rests on. The probe is recorded as skipped with this reason.
std::optional<std::string> left_out_by_profile(const ProbeSpec& spec, const RunExtras& extras, bool only_given);
// Scores the finished run when a profile was given and stores doc["assessment"]; returns the exit
// code the verdict implies (1 on FAIL).
int assess_run(nlohmann::json& doc, const RunExtras& extras);
// The assessment as terminal text, "" when the run was not scored.
std::string render_run_assessment(const nlohmann::json& doc);
// The run's last lines: verdict, limiting resource, failed rules, cost (score::render_summary); "" when not scored.
std::string render_run_summary(const nlohmann::json& doc);
void write_run_side_outputs(const nlohmann::json& doc, const RunExtras& extras);

}  // namespace nodeaudit::cli
