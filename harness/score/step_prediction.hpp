// The model's prediction beside a measured step. A probe that runs a training step (pipeline.step)
// records the figures of the node it ran on, as its own step saw them, in `info.prediction_inputs`
// (with the step demand it ran); after the measurement the session hands the entry here, and the
// model every other prediction uses scores those figures. The probe never calls the scorer.
#pragma once

#include <nlohmann/json.hpp>

namespace nodeaudit::score {

// Adds `predicted_utilization` (and a finding when it is more than 10 points from the measured
// `au`, or one saying why there is none) to an entry whose info holds `prediction_inputs`; leaves
// any other entry as it is.
void add_step_prediction(nlohmann::json& entry);

}  // namespace nodeaudit::score
