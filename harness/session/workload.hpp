// The workload a session measures for: the profile it plans and scores for (parsed once, here,
// into the step demand the probes that emulate a step receive), the parameter texts it implies for
// each probe, the assessment at the end, and side outputs (Prometheus textfile).
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/context.hpp"
#include "harness/core/probe.hpp"
#include "harness/score/predict.hpp"
#include "harness/score/score.hpp"

namespace nodeaudit::session {

struct RunExtras {
  std::string price_per_hour;  // --price-per-hour, text as typed
  std::string prometheus;      // --prometheus FILE
  std::string expect;          // --expect FILE
  std::optional<score::Profile> profile;
  score::CostOptions cost;
  std::string target_gpus;  // --target-gpus SPEC, as typed
  std::optional<score::TargetGpus> target;
  std::string python;  // --python PATH: the interpreter of every probe that runs Python
  // --profile JOB.json, a learn result: the job's own measurements judge the node (its profile is
  // `profile` above); null for a profile.
  std::shared_ptr<const score::PredictJob> learned;
};

// The assessment of `result` for a profile, or for a learned job with what it measured.
nlohmann::json assess_workload(const RunExtras& extras, const nlohmann::json& result);

// Loads and checks the profile and the side-output paths before any probe runs, so bad input
// costs no measuring time. Returns the resolved profile file path ("" when no profile).
std::string prepare_run_extras(const std::string& profile_name_or_path, RunExtras& extras);
// True for a probe that emulates a training step: it declares a `workload` parameter (the profile
// it may be given on its own, `probe ID --workload NAME`) and receives the step demand.
bool takes_step_demand(const ProbeSpec& spec);
// The step demand of a run: its --profile (prepare_run_extras parsed it), else default_step_profile.
StepDemand run_step_demand(const RunExtras& extras);
// The step demand of `probe ID --workload NAME`: NAME parsed here (an error names --workload), or
// run_step_demand when NAME is empty. A bad NAME is a UsageError of the probe, naming --workload.
StepDemand probe_step_demand(const std::string& probe_id, const std::string& workload, const RunExtras& extras);
// Parameter texts a profile implies for a probe, from the parameters it declares: the sample size
// of its data set, the interpreter of --python, and for a probe that emulates a node's GPUs
// (`gpus-in-node`) the --target-gpus figures the assessment uses.
std::map<std::string, std::string> probe_params_for(const ProbeSpec& spec, const RunExtras& extras);
// Why the profile leaves `spec` out of the run, or std::nullopt to run it. Only a probe whose
// figure the profile's assessment never reads is left out (the probe says so itself:
// ProbeSpec::left_out_for_demand), and only when the user did not name probes with --only: the time
// goes to the figures the verdict rests on. The probe is recorded as skipped with this reason.
std::optional<std::string> left_out_by_profile(const ProbeSpec& spec, const RunExtras& extras, bool only_given);
// Scores the finished run when a profile was given and stores doc["assessment"]; returns the exit
// code the verdict implies (1 on FAIL).
int assess_run(nlohmann::json& doc, const RunExtras& extras);
// The assessment as terminal text, "" when the run was not scored.
std::string render_run_assessment(const nlohmann::json& doc);
// The run's last lines: verdict, limiting resource, failed rules, cost (score::render_summary); "" when not scored.
std::string render_run_summary(const nlohmann::json& doc);
void write_run_side_outputs(const nlohmann::json& doc, const RunExtras& extras);

}  // namespace nodeaudit::session
