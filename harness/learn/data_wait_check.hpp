// The loop closed on this node: the learn run's own measured data-wait share beside what the
// scorer's balance model predicts for the same job from this node's storage, decode and
// host-to-device figures (a nodeaudit result of this node, `learn --result FILE`).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/learn/learned_job.hpp"
#include "harness/score/profile.hpp"

namespace nodeaudit::learn {

struct DataWaitCheck {
  double measured_share = 0;              // this job, measured steps: data wait / step time
  std::optional<double> predicted_share;  // the scorer's, from this node's figures; unset when not predicted
  bool scorer_step = false;  // the scorer's own step prediction (else its loader time against this job's compute)
  std::string basis;   // how the prediction was made, or why there is none
  std::string source;  // the result file the node's figures come from
};

// Pure: the learned job, the profile learned from it, and a result document of this node.
// When the scorer can predict this node's step (the result holds its GPU compute figure), its own
// data_wait_share; otherwise the scorer's loader time per step from this node's figures against
// this job's measured compute per step (step time minus data wait), labelled as such.
DataWaitCheck check_data_wait(const LearnedJob& job, const score::Profile& profile, const nlohmann::json& result,
                              const std::string& source);

// "measured 12.0% (this job) / predicted 9.5% (scorer, from this node's figures)".
std::string data_wait_line(const DataWaitCheck& check);
nlohmann::json to_json(const DataWaitCheck& check);

}  // namespace nodeaudit::learn
