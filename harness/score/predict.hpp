// `predict` and `match`: a job (a learn result, or a profile) on nodes (results), each answer from
// the one prediction model (model.hpp). A learn result carries what the job measured about itself
// (learn.job details: job_measured, profile_toml); a profile carries only its declared demand.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/score/cost.hpp"
#include "harness/score/job_measured.hpp"
#include "harness/score/profile.hpp"
#include "harness/score/stages.hpp"

namespace nodeaudit::score {

struct PredictJob {
  std::string name;    // the job's profile name
  std::string source;  // the file it came from
  Profile profile;
  std::optional<JobMeasured> measured;  // a learn result's; none for a profile
  nlohmann::json job_node;              // the learn result itself (its env and any node probes)
};

// A learn result (JSON with a complete learn.job entry) or a profile (a shipped name or a .toml).
// Throws UsageError with one line for anything else.
PredictJob load_predict_job(const std::string& path);
// True when `doc` is a learn result (its probes hold learn.job).
bool is_learn_result(const nlohmann::json& doc);

// One job on one node: step time, samples/s, data wait, GPU utilization, the limiting resource,
// what could not be judged (with the probe that measures it) and the cost of one effective run.
// With `cold_run`, the steps it names from a cold page cache instead of a long run's steady state.
nlohmann::json predict_on_node(const PredictJob& job, const nlohmann::json& node, const std::string& node_name,
                               const CostOptions& cost, const std::optional<ColdRun>& cold_run = std::nullopt);

// The probe whose figure a stage's capacity comes from (for "run nodeaudit run --only PROBE").
std::string probe_for_resource(const std::string& resource, const Profile& profile);

}  // namespace nodeaudit::score
