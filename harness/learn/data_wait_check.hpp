// The loop closed on this node: the learn run's own measured data-wait share beside what the one
// prediction model (score/model.hpp) predicts for the same job, from what the job measured about
// itself and this node's figures (a nodeaudit result of this node, `learn --result FILE`, or the
// probes `learn --audit` ran).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/score/job_measured.hpp"
#include "harness/score/profile.hpp"

namespace nodeaudit::learn {

struct DataWaitCheck {
  double measured_share = 0;              // this job, measured steps: data wait / step time
  std::optional<double> predicted_share;  // the model's, from this node's figures; unset when not judged
  std::optional<double> predicted_step_s;
  double measured_step_s = 0;             // mean of the measured steps
  std::string basis;   // how the prediction was made, or what it could not judge
  std::string source;  // the result file the node's figures come from
};

// Pure: the job's measurements, the profile learned from it, the document it was measured in (its
// env) and a result document of this node.
DataWaitCheck check_data_wait(const score::JobMeasured& measured, const score::Profile& profile, const nlohmann::json& job_node,
                              const nlohmann::json& result, const std::string& source);

// "measured 12.0% (this job) / predicted 9.5% (from this node's figures)".
std::string data_wait_line(const DataWaitCheck& check);
nlohmann::json to_json(const DataWaitCheck& check);

}  // namespace nodeaudit::learn
