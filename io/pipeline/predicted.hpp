// The scorer's prediction for the node the pipeline ran on: a result document holding the figures
// this run has (the emulated GPU's compute rate, the loader rate measured in the pipeline) is
// scored against the profile, and the predicted utilization is read back.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "compute_model.hpp"
#include "harness/score/profile.hpp"

namespace nodeaudit::pipeline {

struct NodeFigures {
  double gemm_tflops = 0;             // per GPU, the rate compute_s was derived from
  double loader_samples_per_s = 0;    // the loader's measured capacity
  std::string cache = "page";         // storage.dataset's cache label for the data set
  double sample_bytes = 0;
};

// A result document (results/SCHEMA.md) with one GPU, gpu.gemm and storage.dataset/storage.read.
nlohmann::json figures_as_result(const score::Profile& profile, const NodeFigures& figures);

struct Prediction {
  std::optional<double> utilization_pct;
  std::string why_not;  // when not predicted
};
Prediction predict_utilization(const score::Profile& profile, const NodeFigures& figures);

}  // namespace nodeaudit::pipeline
